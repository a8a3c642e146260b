/*
 * workq.h - an ordered work queue: jobs run in N threads, in any order,
 * and are taken back in the order they were submitted, so that a tool's
 * output is the same at any thread count.
 *
 * The jobs are the caller's (it allocates them and reads their results);
 * at most max of them are out (submitted and not yet taken back), which
 * bounds the memory they hold.  Nothing here prints or exits.
 *
 *	while (more input) {
 *		if (pf_workq_full(q))
 *			output(pf_workq_take(q));
 *		pf_workq_submit(q, make_job());
 *	}
 *	while ((job = pf_workq_take(q)) != NULL)
 *		output(job);
 *	pf_workq_free(q);
 */
#ifndef PF_WORKQ_H
#define PF_WORKQ_H

typedef struct pf_workq pf_workq;

/* fn(job, arg, thread) does a job, in thread number thread (0 to
   threads - 1: room the caller keeps per thread). */
typedef void	 pf_workq_fn(void *job, void *arg, int thread);

/* threads (1 or more) threads, up to max (1 or more) jobs out.  NULL
   with errno set. */
pf_workq	*pf_workq_open(int threads, int max, pf_workq_fn *fn,
		    void *arg);
/* 1 when max jobs are out: take one back before the next submit. */
int		 pf_workq_full(const pf_workq *q);
/* Hand job to the threads.  The queue must not be full. */
void		 pf_workq_submit(pf_workq *q, void *job);
/* The oldest job out, once it is done (waiting for it); NULL when no job
   is out. */
void		*pf_workq_take(pf_workq *q);
/* Stop the threads (every job must have been taken back) and free. */
void		 pf_workq_free(pf_workq *q);

#endif
