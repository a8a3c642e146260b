/*
 * workq.c - the ordered work queue: jobs finish in any order and come
 * back in the order they were submitted; at most max are out; each runs
 * once, in a thread whose number is in range.
 */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "workq.h"
#include "t.h"

struct job {
	int id, runs, thread;
	uint64_t out;
};

/* A job's work: a spin whose length varies by id, so that later jobs
   often finish before earlier ones. */
static void
run(void *p, void *arg, int thread)
{
	struct job *j = p;
	uint64_t x = (uint64_t)j->id, i, n = (uint64_t)(j->id * 7919 % 13) *
	    20000;

	(void)arg;
	for (i = 0; i < n; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	j->out = x;
	j->runs++;
	j->thread = thread;
}

/* n jobs through threads threads, max out: 1 when every check holds. */
static int
through(int threads, int max, int n)
{
	struct job *jobs = calloc((size_t)n, sizeof(*jobs)), *j;
	pf_workq *q = pf_workq_open(threads, max, run, NULL);
	int next = 0, i, ok = q != NULL && jobs != NULL, out = 0;

	if (!ok)
		return 0;
	ok &= pf_workq_take(q) == NULL;
	for (i = 0; i < n; i++) {
		jobs[i].id = i;
		if (pf_workq_full(q)) {
			ok &= out == max;
			j = pf_workq_take(q);
			ok &= j == &jobs[next++];
			out--;
		}
		pf_workq_submit(q, &jobs[i]);
		out++;
		ok &= out <= max;
	}
	while ((j = pf_workq_take(q)) != NULL)
		ok &= j == &jobs[next++];
	ok &= next == n;
	for (i = 0; i < n; i++)
		ok &= jobs[i].runs == 1 && jobs[i].thread >= 0 &&
		    jobs[i].thread < threads;
	pf_workq_free(q);
	free(jobs);
	return ok;
}

int
main(void)
{
	CHECK(through(1, 1, 50), "one thread, one job out: in order, once");
	CHECK(through(2, 4, 500), "two threads, four out: in order, once "
	    "each, never more than four out");
	CHECK(through(8, 3, 500), "more threads than jobs out");
	CHECK(through(3, 16, 7), "fewer jobs than room");
	CHECK(through(4, 8, 0), "no job at all");
	CHECK(pf_workq_open(0, 1, run, NULL) == NULL &&
	    pf_workq_open(1, 0, run, NULL) == NULL,
	    "no thread or no room is refused");
	return t_done();
}
