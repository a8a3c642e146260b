/*
 * games.c - unit tests of lib/games.c: pf_games_run hands every event out
 * in input order, the games numbered as one reader numbers them, one call
 * at a time, with any number of threads and any piece size; and a stop
 * from the function ends the events there.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "games.h"
#include "t.h"

#define NGAMES	400

struct seen {
	int members, games, errors;
	int busy;		/* a call in progress (atomic) */
	int overlap;		/* a call began while another ran */
	int in_order;		/* every game's number and Event as expected */
	int stop_at;		/* fn says stop at this game (0: never) */
	int after_stop;		/* events after the stop */
};

static int
fn(const pf_games_event *ev, void *arg)
{
	struct seen *s = arg;
	char want[32];
	int r = 0;

	if (__atomic_exchange_n(&s->busy, 1, __ATOMIC_ACQ_REL))
		s->overlap = 1;
	if (s->stop_at > 0 && s->games >= s->stop_at)
		s->after_stop++;
	switch (ev->kind) {
	case PF_GAMES_MEMBER:
		s->members++;
		break;
	case PF_GAMES_GAME:
		s->games++;
		snprintf(want, sizeof(want), "g%d", s->games);
		if (ev->game->number != (uint64_t)s->games ||
		    strcmp(ev->game->event.s, want) != 0 ||
		    ev->game->nmoves != 4 + s->games % 3)
			s->in_order = 0;
		if (s->games == s->stop_at)
			r = -1;
		break;
	default:
		s->errors++;
		break;
	}
	/* (a little work in the call, for another thread to overlap) */
	usleep(s->games % 50 == 0 ? 100 : 0);
	__atomic_store_n(&s->busy, 0, __ATOMIC_RELEASE);
	return r;
}

static int
run(const char *path, int threads, size_t piece, struct seen *s)
{
	pf_games_opts o;
	pf_games *gs;
	int r;

	memset(&o, 0, sizeof(o));
	o.threads = threads;
	o.piece = piece;
	if ((gs = pf_games_open(path, NULL, &o)) == NULL)
		return -2;
	s->in_order = 1;
	r = pf_games_run(gs, fn, s);
	pf_games_close(gs);
	return r;
}

int
main(void)
{
	static const char *moves[] = { "e4", "e5", "Nf3", "Nc6", "Bb5",
	    "a6" };
	char path[] = "/tmp/pf-games-XXXXXX";
	int fd = mkstemp(path), i, k, t, threads[] = { 1, 2, 3, 4 };
	size_t pieces[] = { 100, 700, 1 << 20 }, p;
	FILE *f;

	CHECK(fd != -1 && (f = fdopen(fd, "w")) != NULL, "temporary file");
	if (fd == -1)
		return t_done();
	/* game i: Event "gi", 4 + i % 3 plies */
	for (i = 1; i <= NGAMES; i++) {
		fprintf(f, "[Event \"g%d\"]\n[Result \"*\"]\n\n", i);
		for (k = 0; k < 4 + i % 3; k++)
			fprintf(f, "%s%s ", k % 2 ? "" : k == 0 ? "1. " :
			    k == 2 ? "2. " : "3. ", moves[k]);
		fprintf(f, "*\n\n");
	}
	fclose(f);

	for (t = 0; t < 4; t++)
		for (p = 0; p < 3; p++) {
			struct seen s;
			int r;

			memset(&s, 0, sizeof(s));
			r = run(path, threads[t], pieces[p], &s);
			CHECK(r == 0 && s.members == 1 && s.games == NGAMES &&
			    s.errors == 0 && s.in_order && !s.overlap,
			    "-j %d, pieces of %zu bytes: 1 member, %d games "
			    "in order, one call at a time (got %d, %d, %s%s)",
			    threads[t], pieces[p], NGAMES, s.members, s.games,
			    s.in_order ? "in order" : "OUT OF ORDER",
			    s.overlap ? ", OVERLAPPING" : "");
		}
	/* a stop: no event after it, whichever thread has the turn */
	for (t = 0; t < 4; t++)
		for (k = 1; k <= NGAMES; k += 133) {
			struct seen s;
			int r;

			memset(&s, 0, sizeof(s));
			s.stop_at = k;
			r = run(path, threads[t], 100, &s);
			CHECK(r == 0 && s.games == k && s.after_stop == 0 &&
			    s.in_order && !s.overlap,
			    "-j %d: fn stops at game %d, no event after "
			    "(got %d games, %d events after)", threads[t], k,
			    s.games, s.after_stop);
		}
	unlink(path);
	return t_done();
}
