/*
 * fake-engine - a scripted UCI engine for the fault tests of uci-eval.
 *
 * It speaks enough UCI (uci, isready, setoption MultiPV, ucinewgame,
 * position fen with or without moves, go, quit) and answers every "go" with one line per MultiPV
 * index at the asked depth (score cp 100 - 10 * index, wdl 300 400 300,
 * the legal moves in generation order) and a legal bestmove.  Faults are
 * chosen with environment variables (N counts the "go" commands of this
 * process, so a restarted engine starts again from 0):
 *
 *   FAKE_SLOW_START=ms        sleep before answering "uci"
 *   FAKE_CRASH_AFTER=N        abort() at "go" number N+1
 *   FAKE_CRASH_ON=text        abort() at a "go" whose position has text
 *   FAKE_HANG_AFTER=N         stop answering at "go" number N+1
 *   FAKE_GARBAGE=1            garbage lines around every answer (harmless)
 *   FAKE_GARBAGE_AFTER=N      endless garbage, no bestmove, from N+1
 *   FAKE_BAD_BESTMOVE_AFTER=N an illegal bestmove from "go" N+1 on
 *   FAKE_CLOSE_AFTER=N        close stdout at "go" N+1 and keep reading
 *   FAKE_LONG_LINE_AFTER=N    from "go" N+1: one endless line, no newline
 *   FAKE_LOG=file             append "# pid N", then every command received
 *   FAKE_LOG_PID=1            start every logged command with "PID: "
 *   FAKE_GO_MS=ms             sleep before answering every "go"
 *   FAKE_GO_JITTER=ms         and a further 0 to ms, random per "go"
 *   FAKE_NAME=name            the "id name" (default "Fake 1.0")
 *   FAKE_DUP_MOVE=1           MultiPV line 2 names line 1's move again
 *   FAKE_SAY=text             "info string text" first at every "go"
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "chess.h"

static long
env_num(const char *name, long dflt)
{
	const char *v = getenv(name);

	return v && *v ? strtol(v, NULL, 10) : dflt;
}

static void
sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static void
garbage(void)
{
	printf("\x01\x02\xff binary junk\n");
	printf("info depth x score cp\n");
	printf("info depth 3 score mate\n");
	printf("bestmovx e2e4\n");
	printf("%s\n", "this line has no meaning at all");
	printf("info string hello\r\n");
	fflush(stdout);
}

int
main(void)
{
	char line[8192], pos[8192] = "";
	long crash_after = env_num("FAKE_CRASH_AFTER", -1);
	long hang_after = env_num("FAKE_HANG_AFTER", -1);
	long garbage_after = env_num("FAKE_GARBAGE_AFTER", -1);
	long bad_after = env_num("FAKE_BAD_BESTMOVE_AFTER", -1);
	long close_after = env_num("FAKE_CLOSE_AFTER", -1);
	long long_after = env_num("FAKE_LONG_LINE_AFTER", -1);
	int garbage_always = env_num("FAKE_GARBAGE", 0) != 0;
	int log_pid = env_num("FAKE_LOG_PID", 0) != 0;
	long go_ms = env_num("FAKE_GO_MS", 0);
	long jitter = env_num("FAKE_GO_JITTER", 0);
	long dup_move = env_num("FAKE_DUP_MOVE", 0);
	const char *crash_on = getenv("FAKE_CRASH_ON");
	const char *say = getenv("FAKE_SAY");
	const char *logpath = getenv("FAKE_LOG");
	const char *name = getenv("FAKE_NAME");
	FILE *logf = NULL;
	long gos = 0, multipv = 1;
	pf_board b;
	int have_board = 0;

	signal(SIGPIPE, SIG_IGN);
	srand((unsigned)getpid());
	if (logpath && (logf = fopen(logpath, "a")) != NULL) {
		setvbuf(logf, NULL, _IOLBF, 0);
		fprintf(logf, "# pid %ld\n", (long)getpid());
	}
	while (fgets(line, sizeof(line), stdin) != NULL) {
		line[strcspn(line, "\r\n")] = '\0';
		if (logf && log_pid)
			fprintf(logf, "%ld: %s\n", (long)getpid(), line);
		else if (logf)
			fprintf(logf, "%s\n", line);
		if (strcmp(line, "uci") == 0) {
			sleep_ms(env_num("FAKE_SLOW_START", 0));
			printf("id name %s\nid author nobody\n",
			    name ? name : "Fake 1.0");
			printf("option name Hash type spin default 16 min 1 "
			    "max 1024\n");
			printf("option name MultiPV type spin default 1 min 1 "
			    "max 500\n");
			printf("option name UCI_Chess960 type check default "
			    "false\n");
			printf("option name EvalFile type string default "
			    "nn.nnue\n");
			printf("option name Debug Log File type string "
			    "default\n");
			printf("uciok\n");
		} else if (strcmp(line, "isready") == 0) {
			printf("readyok\n");
		} else if (strncmp(line, "setoption name MultiPV value ", 29)
		    == 0) {
			multipv = strtol(line + 29, NULL, 10);
		} else if (strncmp(line, "position fen ", 13) == 0) {
			char *mv = strstr(line, " moves "), *t;
			pf_move m;
			pf_undo u;

			snprintf(pos, sizeof(pos), "%s", line + 13);
			if (mv != NULL)
				pos[mv - (line + 13)] = '\0';
			have_board = pf_board_from_fen(&b, pos, NULL, 0) == 0;
			/* the moves after it, played */
			for (t = mv ? strtok(mv + 7, " ") : NULL; t != NULL &&
			    have_board; t = strtok(NULL, " ")) {
				if (pf_move_from_uci(&b, t, strlen(t), &m) ==
				    -1) {
					have_board = 0;
					break;
				}
				pf_make_move(&b, m, &u);
			}
		} else if (strncmp(line, "go", 2) == 0) {
			pf_move moves[PF_MAX_MOVES];
			char uci[PF_UCI_MAX];
			long depth = 1;
			int n;

			if (strncmp(line, "go depth ", 9) == 0)
				depth = strtol(line + 9, NULL, 10);
			if (go_ms > 0 || jitter > 0)
				sleep_ms(go_ms + (jitter > 0 ? rand() %
				    (jitter + 1) : 0));
			if (say != NULL) {
				printf("info string %s\n", say);
				fflush(stdout);
			}
			if (gos == crash_after ||
			    (crash_on && strstr(pos, crash_on)))
				abort();
			if (gos == hang_after)
				for (;;)
					pause();
			if (gos == close_after) {
				fclose(stdout);
				while (fgets(line, sizeof(line), stdin))
					;
				return 0;
			}
			if (gos == long_after) {
				static char xs[4096];

				memset(xs, 'x', sizeof(xs));
				fputs("info string ", stdout);
				for (;;)
					if (fwrite(xs, 1, sizeof(xs), stdout) == 0)
						return 1;
			}
			if (gos == garbage_after)
				for (;;)
					garbage();
			if (garbage_always)
				garbage();
			n = have_board ? pf_gen_legal(&b, moves) : 0;
			for (long i = 0; i < multipv && i < n; i++)
				printf("info depth %ld seldepth %ld multipv %ld "
				    "score cp %ld wdl 300 400 300 nodes 10 "
				    "nps 1000 time 0 pv %s\n", depth, depth,
				    i + 1, 100 - 10 * i,
				    pf_move_to_uci(&b, moves[dup_move && i == 1 ?
				    0 : i], uci));
			if (garbage_always)
				garbage();
			if (bad_after >= 0 && gos >= bad_after)
				printf("bestmove a1a1\n");
			else if (n > 0)
				printf("bestmove %s\n",
				    pf_move_to_uci(&b, moves[0], uci));
			else
				printf("bestmove (none)\n");
			gos++;
		} else if (strcmp(line, "quit") == 0) {
			break;
		}
		fflush(stdout);
	}
	if (logf)
		fclose(logf);
	return 0;
}
