/* The alpha-beta cost model and the lower bounds every direct-connect
 * schedule is compared with (Zhao et al., Sec. 3.2 and App. B).
 *
 * A schedule is priced by two numbers: tau_L, its communication steps, and
 * tau_B = T_B / (M/B), the bandwidth term in units of the time one node
 * needs to push the whole vector M through its egress B. With d links of
 * B/d each and a step whose busiest link carries sigma shards of M/N bytes,
 * that step costs sigma (M/N) / (B/d), so tau_B = (d/N) sum_t sigma_t. */
#include "sched/sched.h"

#include <math.h>

double cost_mb_us(const struct sched_cost *c)
{
	return (double)c->size * 8.0 / c->bandwidth * 1e6;
}

double cost_time_us(const struct sched_cost *c, double tau_l, double tau_b)
{
	return tau_l * c->alpha * 1e6 + tau_b * cost_mb_us(c);
}

unsigned cost_phases(enum sched_collective c)
{
	return c == SCHED_ALLREDUCE ? 2 : 1;
}

/* Layer i of the Moore tree holds up to d^i nodes, each i hops from the
 * root: the closest the N-1 others can be. */
uint64_t moore_tree_cost(uint64_t n, uint32_t d)
{
	uint64_t L = 0, rem = n ? n - 1 : 0, layer = d;

	if (d == 0)
		return 0;
	for (uint64_t i = 1; rem > 0; i++) {
		uint64_t k = rem < layer ? rem : layer;

		L += i * k;
		rem -= k;
		/* Layers only grow; past n they no longer matter. */
		if (layer <= n)
			layer *= d;
	}
	return L;
}

/* Thm 5 / Def 12: no schedule takes fewer steps than the diameter, and no
 * N-node digraph of degree d has a diameter below the Moore bound.
 * Thm 6: every node must receive (N-1)/N of the vector through its B.
 * App. B.3: reduce-scatter then allgather pays both twice. */
int cost_lower_bound(enum sched_collective c, uint32_t n, uint32_t d, struct cost_bound *b)
{
	unsigned k = cost_phases(c);

	if (n < 2 || d < 1)
		return -1;
	if (c == SCHED_ALLTOALL) {
		/* Basu et al. Cor. 3: T >= m L(N, d) / (N d b) = (M/B) L(N, d) / N,
		 * from theta <= d b / L(N, d) (Thm 2); and no fewer steps than
		 * the diameter. */
		uint64_t L = moore_tree_cost(n, d);

		b->steps = moore_diameter(n, d);
		b->tau_b = frac_make((int64_t)L, n);
		return L ? 0 : -1;
	}
	b->steps = k * moore_diameter(n, d);
	b->tau_b = frac_mul(frac_make(k, 1), frac_make((int64_t)n - 1, n));
	return 0;
}
