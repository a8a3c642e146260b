/*
 * t.h - a tiny TAP test harness for the C unit tests.  Each CHECK prints
 * "ok N - what" or "not ok N - what" (with file:line); t_done() prints the
 * plan and returns the exit status.  tests/run-all counts the lines.
 */
#ifndef PF_T_H
#define PF_T_H

#include <stdio.h>

static int t_n, t_failed;

#define CHECK(cond, ...) do {						\
	t_n++;								\
	if (cond) {							\
		printf("ok %d - ", t_n);				\
	} else {							\
		t_failed++;						\
		printf("not ok %d - %s:%d: ", t_n, __FILE__, __LINE__);	\
	}								\
	printf(__VA_ARGS__);						\
	printf("\n");							\
} while (0)

/* Like CHECK, but prints nothing when it passes: for loops over
   thousands of cases, followed by one summarising CHECK. */
#define CHECK_QUIET(cond, ...) do {					\
	if (!(cond)) {							\
		t_failed++;						\
		printf("# %s:%d: ", __FILE__, __LINE__);		\
		printf(__VA_ARGS__);					\
		printf("\n");						\
	}								\
} while (0)

static inline int t_done(void)
{
	printf("1..%d\n", t_n);
	return t_failed ? 1 : 0;
}

#endif
