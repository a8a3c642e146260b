/*
 * policyopt.h - the policy options every tool that turns per-move scores
 * into probabilities shares (softtarget, complexity): --policy, --drop,
 * --power and --temperature, with one parser, one set of defaults and one
 * check of the combination, so that they mean the same in every tool.
 * Also the range-checked parser of a number option that those tools use
 * for their other options.
 *
 * Nothing prints: a refused value or combination gives -1 and the message
 * for the tool to print, in the form "--drop: 1: too large (want 0 to
 * 0.99)".
 */
#ifndef PF_POLICYOPT_H
#define PF_POLICYOPT_H

#include <stddef.h>

#include "target.h"

/* Options given, to refuse those the chosen method does not use. */
#define PF_POLOPT_DROP		0x01
#define PF_POLOPT_POWER		0x02
#define PF_POLOPT_TEMPERATURE	0x04

typedef struct pf_policy_opts {
	int method;		/* PF_POLICY_*, or 0 for --policy none */
	double drop, power, temperature;	/* as given */
	unsigned given;		/* PF_POLOPT_* */
} pf_policy_opts;

/* The defaults: zeman, nothing given. */
void	pf_policy_opts_init(pf_policy_opts *po);

/*
 * Take one option: name is its long name without the dashes ("policy",
 * "drop", "power" or "temperature"), arg its argument.  --policy takes
 * zeman, softmax or winprob, and none when allow_none.  Ranges: --drop 0
 * to 0.99, --power above 0 to 64, --temperature above 0 to 1e9.
 * 1 taken, 0 when name is not a policy option, -1 refused (err says why).
 */
int	pf_policy_option(pf_policy_opts *po, const char *name,
	    const char *arg, int allow_none, char *err, size_t errlen);

/*
 * After every option: refuse --drop or --power without the zeman method
 * and --temperature without softmax or winprob, then fill *pp with the
 * method's defaults (PF_ZEMAN_DROP, PF_ZEMAN_POWER, PF_SOFTMAX_T or
 * PF_WINPROB_T, the wdl sigmoid PF_WDL_A and PF_WDL_B) and the values
 * given.  pp->method is 0 for none.  0, or -1 (err says why).
 */
int	pf_policy_opts_params(const pf_policy_opts *po, pf_policy_params *pp,
	    char *err, size_t errlen);

/*
 * A number option: arg must be a finite number in [min, max], and above 0
 * when positive.  0 and *out set, or -1 with "OPT: ARG: invalid (want MIN
 * to MAX)" (too small, too large) or "OPT: ARG: must be greater than 0"
 * in err.
 */
int	pf_opt_double(const char *opt, const char *arg, double min,
	    double max, int positive, double *out, char *err, size_t errlen);

/*
 * A range option "A-B" of two integers with min <= A <= B <= max
 * (softtarget --policy-depths).  0 and *lo, *hi set, or -1 with the
 * reason in err: "OPT: ARG: want A-B (MIN <= A <= B <= MAX)" when it is
 * not two numbers joined by a dash, "OPT: ARG: first number too small
 * (want MIN to MAX)" and the like, or "OPT: ARG: the first is above the
 * last".
 */
int	pf_opt_range(const char *opt, const char *arg, long long min,
	    long long max, int *lo, int *hi, char *err, size_t errlen);

#endif
