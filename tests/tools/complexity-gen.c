/*
 * complexity-gen - write a record stream for benchmarking complexity and
 * repair-mark: COUNT records, each as uci-eval -d 1 | uci-eval -d DEPTH
 * --multipv all --keep-depths would leave it: an engine evaluation at
 * depth 1, one at DEPTH, the final per-move table of every legal move at
 * DEPTH, then the intermediate tables of depths 1 to DEPTH - 1.  The
 * positions are random games from the start position (game id, ply, the
 * move played, the last record flagged), at most PLIES plies each.  The
 * scores are random, best first, and change from depth to depth, now and
 * then with a move that climbs from the bottom to the top (a record that
 * complexity finds complex).  Deterministic (a fixed linear congruential
 * generator), so runs are comparable.
 *
 *   complexity-gen [-c] [-n count] [-d depth] [-p plies] > file
 *
 * -c: core records instead, as pgn2pos writes them: no evaluation and no
 * table, a meta extension per game (random Elos and one of four time
 * controls): the distinct positions of random games for scripts/bench-select.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "posflow.h"

static uint32_t seed = 4242;

static uint32_t
rnd(void)
{
	seed = seed * 1103515245u + 12345u;
	return seed >> 8;
}

/* Sort the table's entries best first (insertion: n is small). */
static void
sort_table(pf_movescores *s)
{
	pf_movescore t;
	int i, j;

	for (i = 1; i < s->n; i++) {
		t = s->m[i];
		for (j = i; j > 0 && s->m[j - 1].score < t.score; j--)
			s->m[j] = s->m[j - 1];
		s->m[j] = t;
	}
}

int
main(int argc, char *argv[])
{
	static pf_movescores tab[65];
	pf_movescores *s;
	pf_move moves[PF_MAX_MOVES];
	int32_t base[PF_MAX_MOVES];
	pf_board start, b;
	pf_eval ev;
	pf_writer *w;
	pf_extbuf eb = { 0 };
	pf_record rec;
	pf_undo u;
	const char *errstr = NULL;
	long long count = 100000, depth = 10, plies = 60, k;
	int ch, n, i, d, ply = 0, climber, core = 0;
	pf_meta meta;
	uint64_t game = 0;
	char err[128];

	pf_prog_init(argv);
	while ((ch = getopt(argc, argv, "cd:n:p:")) != -1) {
		switch (ch) {
		case 'c':
			core = 1;
			break;
		case 'd':
			depth = pf_strtonum(optarg, 2, 64, &errstr);
			break;
		case 'n':
			count = pf_strtonum(optarg, 0, 1000000000LL, &errstr);
			break;
		case 'p':
			plies = pf_strtonum(optarg, 1, 10000, &errstr);
			break;
		default:
			fprintf(stderr, "usage: complexity-gen [-c] [-n count] "
			    "[-d depth] [-p plies]\n");
			return 2;
		}
		if (errstr != NULL) {
			pf_warnx("-%c %s: %s", ch, optarg, errstr);
			return 2;
		}
	}
	if (pf_board_from_fen(&start,
	    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", err,
	    sizeof(err)) == -1 ||
	    (w = pf_writer_open_fd(STDOUT_FILENO, "stdout", NULL)) == NULL) {
		pf_warnx("setup failed");
		return 1;
	}
	b = start;
	memset(&ev, 0, sizeof(ev));
	ev.source = PF_SRC_ENGINE;
	ev.limit_kind = PF_LIMIT_DEPTH;
	for (k = 0; k < count; k++) {
		n = pf_gen_legal(&b, moves);
		memset(&rec, 0, sizeof(rec));
		pf_board_pack(&b, rec.pos);
		rec.game_id = game;
		rec.ply = (uint16_t)ply;
		rec.move = n > 0 && ply < plies && k + 1 < count ?
		    moves[rnd() % (unsigned)n] : PF_MOVE_NONE;
		if (rec.move == PF_MOVE_NONE)
			rec.flags |= PF_RF_LAST;
		if (n == 0)
			rec.flags |= pf_in_check(&b) ? PF_RF_MATE | PF_RF_CHECK :
			    PF_RF_STALEMATE;
		if (core) {
			static const uint32_t tc[4][2] = { { 60, 0 },
			    { 180, 2 }, { 300, 3 }, { 600, 5 } };

			if (ply == 0) {
				memset(&meta, 0, sizeof(meta));
				meta.white_elo = (uint16_t)(800 + rnd() % 2000);
				meta.black_elo = (uint16_t)(800 + rnd() % 2000);
				i = (int)(rnd() % 4);
				meta.base_s = tc[i][0];
				meta.inc_s = tc[i][1];
				meta.termination = PF_TERM_NORMAL;
			}
			pf_extbuf_reset(&eb);
			if (pf_meta_encode(&meta, &eb) == -1)
				goto fail;
			goto put;
		}
		for (i = 0; i < n; i++)
			base[i] = (int32_t)(rnd() % 300) - 150;
		/* One record in eight hides a move that only the last third
		   of the depths sees. */
		climber = n > 1 && rnd() % 8 == 0 ? (int)(rnd() % (unsigned)n) :
		    -1;
		for (d = 1; d <= depth && n > 0; d++) {
			s = &tab[d];
			s->limit_kind = PF_LIMIT_DEPTH;
			s->limit = (uint64_t)depth;
			s->depth = (uint16_t)d;
			s->flags = PF_MSF_COMPLETE |
			    (d < depth ? PF_MSF_INTERMEDIATE : 0);
			s->n = (uint16_t)n;
			for (i = 0; i < n; i++) {
				s->m[i].move = moves[i];
				s->m[i].score_kind = PF_SCORE_CP;
				s->m[i].depth = (uint8_t)d;
				s->m[i].score = base[i] +
				    (int32_t)(rnd() % 41) - 20;
				if (i == climber)
					s->m[i].score = 3 * d > 2 * depth ?
					    400 : -400;
			}
			sort_table(s);
		}
		/* The two evaluations, then the tables as uci-eval
		   --keep-depths writes them: the final one, then the
		   shallower ones, shallowest first. */
		pf_extbuf_reset(&eb);
		for (d = 1; d <= depth; d += (int)depth - 1) {
			ev.limit = (uint64_t)d;
			ev.depth = (uint16_t)d;
			ev.score = n > 0 ? tab[d].m[0].score : 0;
			ev.best = n > 0 ? tab[d].m[0].move : PF_MOVE_NONE;
			if (pf_eval_encode(&ev, &eb) == -1)
				goto fail;
		}
		for (d = (int)depth; d > 0 && n > 0; d = d == depth ? 1 :
		    d + 1 < depth ? d + 1 : 0)
			if (pf_movescores_encode(&tab[d], &eb) == -1)
				goto fail;
put:
		rec.ext = eb.data;
		rec.ext_len = (uint32_t)eb.len;
		if (pf_writer_put(w, &rec) == -1)
			break;
		if (rec.move != PF_MOVE_NONE) {
			pf_make_move(&b, rec.move, &u);
			ply++;
		} else {
			game++;
			ply = 0;
			b = start;
		}
	}
	if (pf_writer_close(w) == -1 && !pf_writer_broken_pipe(w)) {
		pf_warnx("%s", pf_writer_error(w));
		return 1;
	}
	pf_writer_free(w);
	pf_extbuf_free(&eb);
	return 0;
fail:
	pf_warnx("encode failed");
	return 1;
}
