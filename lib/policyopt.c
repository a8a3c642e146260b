/*
 * policyopt.c - the shared policy options (see policyopt.h).
 */
#include <stdio.h>
#include <string.h>

#include "policyopt.h"
#include "prog.h"

/* In PF_POLICY_* order; "none" (0) writes no policy. */
static const char *const method_names[] = { "none", "zeman", "softmax",
	"winprob" };

void
pf_policy_opts_init(pf_policy_opts *po)
{
	memset(po, 0, sizeof(*po));
	po->method = PF_POLICY_ZEMAN;
}

int
pf_opt_double(const char *opt, const char *arg, double min, double max,
    int positive, double *out, char *err, size_t errlen)
{
	const char *errstr;
	double v;

	v = pf_strtod(arg, min, max, &errstr);
	if (errstr != NULL) {
		snprintf(err, errlen, "%s: %s: %s (want %g to %g)", opt, arg,
		    errstr, min, max);
		return -1;
	}
	if (positive && !(v > 0)) {
		snprintf(err, errlen, "%s: %s: must be greater than 0", opt,
		    arg);
		return -1;
	}
	*out = v;
	return 0;
}

int
pf_policy_option(pf_policy_opts *po, const char *name, const char *arg,
    int allow_none, char *err, size_t errlen)
{
	/* The number options: range, and whether 0 is refused. */
	const struct {
		const char *name, *opt;
		double min, max;
		int positive;
		double *out;
		unsigned flag;
	} nums[] = {
		{ "drop", "--drop", 0, 0.99, 0, &po->drop, PF_POLOPT_DROP },
		{ "power", "--power", 0, 64, 1, &po->power, PF_POLOPT_POWER },
		{ "temperature", "--temperature", 0, 1e9, 1, &po->temperature,
		    PF_POLOPT_TEMPERATURE }
	};
	size_t k;
	int i;

	if (strcmp(name, "policy") == 0) {
		for (i = allow_none ? 0 : 1; i < 4; i++)
			if (strcmp(arg, method_names[i]) == 0) {
				po->method = i;
				return 1;
			}
		snprintf(err, errlen, "--policy: %s: unknown method", arg);
		return -1;
	}
	for (k = 0; k < sizeof(nums) / sizeof(nums[0]); k++) {
		if (strcmp(name, nums[k].name) != 0)
			continue;
		if (pf_opt_double(nums[k].opt, arg, nums[k].min, nums[k].max,
		    nums[k].positive, nums[k].out, err, errlen) == -1)
			return -1;
		po->given |= nums[k].flag;
		return 1;
	}
	return 0;
}

int
pf_policy_opts_params(const pf_policy_opts *po, pf_policy_params *pp,
    char *err, size_t errlen)
{
	int temp = po->method == PF_POLICY_SOFTMAX ||
	    po->method == PF_POLICY_WINPROB;

	if ((po->given & (PF_POLOPT_DROP | PF_POLOPT_POWER)) &&
	    po->method != PF_POLICY_ZEMAN) {
		snprintf(err, errlen, "--drop and --power need --policy zeman");
		return -1;
	}
	if ((po->given & PF_POLOPT_TEMPERATURE) && !temp) {
		snprintf(err, errlen, "--temperature needs --policy softmax or "
		    "winprob");
		return -1;
	}
	pf_policy_params_default(pp, po->method);
	if (po->given & PF_POLOPT_DROP)
		pp->drop = po->drop;
	if (po->given & PF_POLOPT_POWER)
		pp->power = po->power;
	if (po->given & PF_POLOPT_TEMPERATURE)
		pp->temperature = po->temperature;
	return 0;
}

int
pf_opt_range(const char *opt, const char *arg, long long min, long long max,
    int *lo, int *hi, char *err, size_t errlen)
{
	const char *dash, *errstr, *which = "first";
	char first[32];
	long long a, b = 0;
	size_t len;

	dash = strchr(arg, '-');
	if (dash == NULL || dash == arg ||
	    (len = (size_t)(dash - arg)) >= sizeof(first)) {
		snprintf(err, errlen, "%s: %s: want A-B (%lld <= A <= B <= "
		    "%lld)", opt, arg, min, max);
		return -1;
	}
	memcpy(first, arg, len);
	first[len] = '\0';
	a = pf_strtonum(first, min, max, &errstr);
	if (errstr == NULL) {
		which = "last";
		b = pf_strtonum(dash + 1, min, max, &errstr);
	}
	if (errstr != NULL) {
		snprintf(err, errlen, "%s: %s: %s number %s (want %lld to "
		    "%lld)", opt, arg, which, errstr, min, max);
		return -1;
	}
	if (a > b) {
		snprintf(err, errlen, "%s: %s: the first is above the last",
		    opt, arg);
		return -1;
	}
	*lo = (int)a;
	*hi = (int)b;
	return 0;
}
