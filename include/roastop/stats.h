/* Exact running statistics (Welford): count, sum, min, max, mean and sample
 * standard deviation, in constant memory. */
#ifndef ROASTOP_STATS_H
#define ROASTOP_STATS_H

#include "roastop/common.h"

struct stats {
	uint64_t n;
	double sum;
	double mean;
	double m2; /* sum of squared deviations from the mean */
	double min;
	double max;
};

void stats_init(struct stats *s);
void stats_add(struct stats *s, double x); /* NaN and inf are ignored */
/* Each returns invalid when n == 0; std is 0 when n == 1 (as roastcoffea). */
optnum stats_mean(const struct stats *s);
optnum stats_min(const struct stats *s);
optnum stats_max(const struct stats *s);
optnum stats_std(const struct stats *s); /* sample std, divisor n-1 */

#endif
