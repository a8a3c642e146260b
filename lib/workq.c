/*
 * workq.c - an ordered work queue (workq.h): a ring of max slots; the
 * threads take the jobs in the order they were submitted and mark each
 * done, and pf_workq_take hands back the oldest once it is done.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "workq.h"

struct pf_workq {
	pthread_mutex_t mu;
	pthread_cond_t work;	/* a job to run, or quit */
	pthread_cond_t done;	/* a job is done */
	pthread_t *tid;
	struct thread *th;
	int threads, max, quit;
	pf_workq_fn *fn;
	void *arg;
	void **job;		/* the ring: job i is in slot i % max */
	unsigned char *finished;
	uint64_t head;		/* the oldest job out */
	uint64_t next;		/* the next job for a thread */
	uint64_t tail;		/* the next job submitted */
};

struct thread {
	pf_workq *q;
	int no;
};

static void *
worker(void *p)
{
	pf_workq *q = ((struct thread *)p)->q;
	int no = ((struct thread *)p)->no;
	uint64_t i;

	pthread_mutex_lock(&q->mu);
	for (;;) {
		while (q->next == q->tail && !q->quit)
			pthread_cond_wait(&q->work, &q->mu);
		if (q->next == q->tail)
			break;
		i = q->next++;
		pthread_mutex_unlock(&q->mu);
		q->fn(q->job[i % (uint64_t)q->max], q->arg, no);
		pthread_mutex_lock(&q->mu);
		q->finished[i % (uint64_t)q->max] = 1;
		pthread_cond_broadcast(&q->done);
	}
	pthread_mutex_unlock(&q->mu);
	return NULL;
}

pf_workq *
pf_workq_open(int threads, int max, pf_workq_fn *fn, void *arg)
{
	pf_workq *q;
	int i, e;

	if (threads < 1 || max < 1) {
		errno = EINVAL;
		return NULL;
	}
	if ((q = calloc(1, sizeof(*q))) == NULL ||
	    (q->tid = calloc((size_t)threads, sizeof(*q->tid))) == NULL ||
	    (q->th = calloc((size_t)threads, sizeof(*q->th))) == NULL ||
	    (q->job = calloc((size_t)max, sizeof(*q->job))) == NULL ||
	    (q->finished = calloc((size_t)max, 1)) == NULL) {
		if (q != NULL) {
			free(q->tid);
			free(q->th);
			free(q->job);
			free(q);
		}
		errno = ENOMEM;
		return NULL;
	}
	q->max = max;
	q->fn = fn;
	q->arg = arg;
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->work, NULL);
	pthread_cond_init(&q->done, NULL);
	for (i = 0; i < threads; i++) {
		q->th[i].q = q;
		q->th[i].no = i;
		if ((e = pthread_create(&q->tid[i], NULL, worker,
		    &q->th[i])) != 0) {
			q->threads = i;
			pf_workq_free(q);
			errno = e;
			return NULL;
		}
	}
	q->threads = threads;
	return q;
}

int
pf_workq_full(const pf_workq *q)
{
	/* head and tail move under the caller's thread alone */
	return q->tail - q->head >= (uint64_t)q->max;
}

void
pf_workq_submit(pf_workq *q, void *job)
{
	pthread_mutex_lock(&q->mu);
	q->job[q->tail % (uint64_t)q->max] = job;
	q->finished[q->tail % (uint64_t)q->max] = 0;
	q->tail++;
	pthread_cond_signal(&q->work);
	pthread_mutex_unlock(&q->mu);
}

void *
pf_workq_take(pf_workq *q)
{
	void *job;
	size_t s;

	pthread_mutex_lock(&q->mu);
	if (q->head == q->tail) {
		pthread_mutex_unlock(&q->mu);
		return NULL;
	}
	s = (size_t)(q->head % (uint64_t)q->max);
	while (!q->finished[s])
		pthread_cond_wait(&q->done, &q->mu);
	job = q->job[s];
	q->head++;
	pthread_mutex_unlock(&q->mu);
	return job;
}

void
pf_workq_free(pf_workq *q)
{
	int i;

	if (q == NULL)
		return;
	pthread_mutex_lock(&q->mu);
	q->quit = 1;
	pthread_cond_broadcast(&q->work);
	pthread_mutex_unlock(&q->mu);
	for (i = 0; i < q->threads; i++)
		pthread_join(q->tid[i], NULL);
	pthread_mutex_destroy(&q->mu);
	pthread_cond_destroy(&q->work);
	pthread_cond_destroy(&q->done);
	free(q->tid);
	free(q->th);
	free(q->job);
	free(q->finished);
	free(q);
}
