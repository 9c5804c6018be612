/* Welford's running mean and M2; Chan et al. for merging. */
#include "roastop/stats.h"

#include <math.h>

void stats_init(struct stats *s)
{
	*s = (struct stats){ .min = INFINITY, .max = -INFINITY };
}

/* A non-finite value would turn every later mean and std into NaN, which
 * JSON cannot carry; the decoders reject them, this is the backstop. */
void stats_add(struct stats *s, double x)
{
	if (!isfinite(x))
		return;
	s->n++;
	s->sum += x;
	double d = x - s->mean;
	s->mean += d / (double)s->n;
	s->m2 += d * (x - s->mean);
	if (x < s->min)
		s->min = x;
	if (x > s->max)
		s->max = x;
}

optnum stats_mean(const struct stats *s)
{
	return s->n ? optnum_of(s->mean) : optnum_none();
}

optnum stats_min(const struct stats *s)
{
	return s->n ? optnum_of(s->min) : optnum_none();
}

optnum stats_max(const struct stats *s)
{
	return s->n ? optnum_of(s->max) : optnum_none();
}

/* Sample standard deviation, divisor n - 1; 0 for one value (roastcoffea). */
optnum stats_std(const struct stats *s)
{
	if (s->n == 0)
		return optnum_none();
	if (s->n == 1)
		return optnum_of(0.0);
	double var = s->m2 / (double)(s->n - 1);
	return optnum_of(var > 0 ? sqrt(var) : 0.0);
}
