/*
 * softtarget-gen - write a record stream for benchmarking softtarget:
 * COUNT records, each with a final per-move score table of up to MOVES
 * legal moves (best first; no table with -m 0) and one depth-limited
 * engine evaluation.  The records are games, as pgn2pos writes them: each
 * starts from one of a fixed set of real middlegame positions and goes on
 * for up to PLIES random legal moves (game id, ply, the move played, the
 * last record flagged).  Deterministic (a fixed linear congruential
 * generator), so runs are comparable.  With -i K, K games are played at
 * once and their records interleaved, as in a shuffled stream: no record
 * follows the one it was played from.
 *
 *   softtarget-gen [-n count] [-m moves] [-p plies] [-i games] > file
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "posflow.h"

static const char *const fens[] = {
	"r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
	"r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4",
	"r1bq1rk1/ppp2ppp/2np1n2/2b1p3/2B1P3/2NP1N2/PPP2PPP/R1BQ1RK1 w - - 0 7",
	"r2q1rk1/pp2bppp/2n1pn2/3p4/3P1B2/2PB1N2/PP1N1PPP/R2Q1RK1 b - - 3 10",
	"2rq1rk1/pb2bppp/1pn1pn2/2pp4/3P4/1PNBPN2/PB3PPP/2RQ1RK1 w - - 2 12",
	"r1b2rk1/2q1bppp/p2p1n2/np2p3/3PP3/2P2N1P/PPB2PP1/RNBQR1K1 w - - 1 13",
	"4rrk1/pp1qbppp/2n1pn2/3p4/3P4/2NBPN2/PPQ2PPP/3R1RK1 w - - 4 15",
	"r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
};
#define NFENS	(sizeof(fens) / sizeof(fens[0]))

static uint32_t seed = 12345;

static uint32_t
rnd(void)
{
	seed = seed * 1103515245u + 12345u;
	return seed >> 8;
}

int
main(int argc, char *argv[])
{
	pf_board boards[NFENS], *b, *play;
	pf_move moves[PF_MAX_MOVES], played;
	pf_movescores *s;
	pf_eval ev;
	pf_writer *w;
	pf_extbuf eb = { 0 };
	pf_record rec;
	pf_undo u;
	const char *errstr = NULL;
	long long count = 1000000, want = 30, plies = 60, k, inter = 1;
	uint64_t *game, next_game = 0;
	int ch, n, nall, i, j, *ply, g, verbose = 0;
	long long tabled = 0, tablemoves = 0;
	int32_t score;
	char err[128];

	pf_prog_init(argv);
	while ((ch = getopt(argc, argv, "i:m:n:p:v")) != -1) {
		switch (ch) {
		case 'i':
			inter = pf_strtonum(optarg, 1, 4096, &errstr);
			break;
		case 'm':
			want = strcmp(optarg, "all") == 0 ? PF_MAX_MOVES :
			    pf_strtonum(optarg, 0, PF_MAX_MOVES, &errstr);
			break;
		case 'n':
			count = pf_strtonum(optarg, 0, 1000000000LL, &errstr);
			break;
		case 'p':
			plies = pf_strtonum(optarg, 1, 10000, &errstr);
			break;
		case 'v':
			verbose = 1;
			break;
		default:
			fprintf(stderr, "usage: softtarget-gen [-v] [-n count] "
			    "[-m moves|all] [-p plies] [-i games]\n");
			return 2;
		}
		if (errstr != NULL) {
			pf_warnx("-%c %s: %s", ch, optarg, errstr);
			return 2;
		}
	}
	for (i = 0; i < (int)NFENS; i++)
		if (pf_board_from_fen(&boards[i], fens[i], err,
		    sizeof(err)) == -1) {
			pf_warnx("%s: %s", fens[i], err);
			return 1;
		}
	play = calloc((size_t)inter, sizeof(*play));
	game = calloc((size_t)inter, sizeof(*game));
	ply = calloc((size_t)inter, sizeof(*ply));
	if (play == NULL || game == NULL || ply == NULL ||
	    (s = calloc(1, sizeof(*s))) == NULL ||
	    (w = pf_writer_open_fd(STDOUT_FILENO, "stdout", NULL)) == NULL) {
		pf_warn("setup");
		return 1;
	}
	memset(&ev, 0, sizeof(ev));
	ev.source = PF_SRC_ENGINE;
	ev.limit_kind = PF_LIMIT_DEPTH;
	ev.limit = 12;
	ev.depth = 12;
	for (g = 0; g < inter; g++) {
		game[g] = next_game++;
		play[g] = boards[game[g] % NFENS];
	}
	for (k = 0; k < count; k++) {
		g = (int)(k % inter);
		b = &play[g];
		n = nall = pf_gen_legal(b, moves);
		if (n > want)
			n = (int)want;
		memset(&rec, 0, sizeof(rec));
		pf_board_pack(b, rec.pos);
		rec.game_id = game[g];
		rec.ply = (uint16_t)ply[g];
		rec.result = (uint8_t)(1 + game[g] % 3);
		s->limit_kind = PF_LIMIT_DEPTH;
		s->flags = n == nall ? PF_MSF_COMPLETE : 0;
		s->depth = 12;
		s->limit = 12;
		s->n = (uint16_t)n;
		score = (int32_t)(rnd() % 200) - 50;
		/* A random choice and order of legal moves, scores falling:
		   best first, as an engine lists them. */
		for (i = 0; i < n; i++) {
			pf_move t;

			j = i + (int)(rnd() % (unsigned)(nall - i));
			t = moves[i];
			moves[i] = moves[j];
			moves[j] = t;
			s->m[i].move = moves[i];
			s->m[i].score_kind = PF_SCORE_CP;
			s->m[i].depth = 12;
			s->m[i].score = score;
			score -= (int32_t)(rnd() % 40);
		}
		played = nall > 0 && ply[g] < plies && k + inter < count ?
		    moves[rnd() % (unsigned)nall] : PF_MOVE_NONE;
		rec.move = played;
		if (played == PF_MOVE_NONE)
			rec.flags |= PF_RF_LAST;
		ev.score_kind = PF_SCORE_CP;
		ev.score = n > 0 ? s->m[0].score : 0;
		ev.best = n > 0 ? s->m[0].move : PF_MOVE_NONE;
		pf_extbuf_reset(&eb);
		if (pf_eval_encode(&ev, &eb) == -1 ||
		    (want > 0 && pf_movescores_encode(s, &eb) == -1)) {
			pf_warnx("encode failed");
			return 1;
		}
		rec.ext = eb.data;
		rec.ext_len = (uint32_t)eb.len;
		if (want > 0) {
			tabled++;
			tablemoves += n;
		}
		if (pf_writer_put(w, &rec) == -1)
			break;
		if (played != PF_MOVE_NONE) {
			pf_make_move(b, played, &u);
			ply[g]++;
		} else {
			game[g] = next_game++;
			ply[g] = 0;
			*b = boards[game[g] % NFENS];
		}
	}
	if (pf_writer_close(w) == -1 && !pf_writer_broken_pipe(w)) {
		pf_warnx("%s", pf_writer_error(w));
		return 1;
	}
	if (verbose)
		fprintf(stderr, "%.1f\n", tabled > 0 ?
		    (double)tablemoves / (double)tabled : 0.0);
	pf_writer_free(w);
	pf_extbuf_free(&eb);
	free(s);
	free(play);
	free(game);
	free(ply);
	return 0;
}
