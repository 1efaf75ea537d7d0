// The Clp half of rwa/lp.c: COIN-OR Clp behind the same struct lp
// as lp_solve, built into the plugin libofc-clp.so (rwa/lp_clp.h says why a
// plugin). C++ because what a time limit and a cancellation need, a check
// at every iteration, is Clp's ClpEventHandler: its C interface hands
// messages to a callback only at a log level, and prints every message it
// hands over (Clp_C_Interface's handler calls back, then prints), which a
// library that never prints cannot have. Nothing here prints: Clp's
// messages go to a handler that drops them. Called from rwa/lp.c alone.
#include <coin/ClpEventHandler.hpp>
#include <coin/ClpFactorization.hpp>
#include <coin/ClpSimplex.hpp>
#include <coin/CoinError.hpp>
#include <coin/CoinMessageHandler.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <vector>

#include "rwa/lp_clp.h"
#include "rwa/lp_clp_split.h"

namespace
{

// Nothing printed, whatever Clp says.
class Quiet : public CoinMessageHandler
{
      public:
	int print() override
	{
		return 0;
	}
	CoinMessageHandler *clone() const override
	{
		return new Quiet(*this);
	}
};

// At every iteration, ask rwa/lp.c whether to stop (its deadline, its
// cancel flag): Clp then ends with status 5.
struct stop_call {
	int (*fn)(void *) = nullptr;
	void *ctx = nullptr;
	bool cleaned = false; // the dual ended by Clp's primal clean-up
};

class Stop : public ClpEventHandler
{
      public:
	stop_call *call = nullptr; // the clp's own (its cleaned flag is set here)

	int event(Event e) override
	{
		// the dual's end, before ClpSimplex::dual's clean-up: status 10
		// is "clean up by the primal" (dual infeasibilities left)
		if (e == looksEndInDual && model_->problemStatus() == 10)
			call->cleaned = true;
		if (e != endOfIteration && e != endOfFactorization)
			return -1;
		return call->fn && call->fn(call->ctx) ? 5 : -1;
	}
	ClpEventHandler *clone() const override
	{
		return new Stop(*this);
	}
};

} // namespace

struct clp {
	// the pool the pricing is split over (set_threads), or none; before
	// m, whose matrix points at it, so that it outlives m
	std::unique_ptr<Workers> workers;
	ClpSimplex m;
	Quiet quiet;
	stop_call stop;
	// Rows (or columns) added since the last flush, as arrays: Clp adds
	// them in one go, where one at a time copies the matrix each time.
	// (Not CoinBuild: Clp 1.17's addRows of one fails on a model of no
	// rows, "Bad new rownum".)
	struct pending {
		std::vector<CoinBigIndex> start{0};
		std::vector<int> index;
		std::vector<double> value, lo, hi, obj;
		size_t count() const
		{
			return lo.size();
		}
		void clear()
		{
			start.assign(1, 0);
			index.clear();
			value.clear();
			lo.clear();
			hi.clear();
			obj.clear();
		}
		void add(int n, const int *idx, const double *val, double l, double h, double o)
		{
			index.insert(index.end(), idx, idx + n);
			value.insert(value.end(), val, val + n);
			start.push_back((CoinBigIndex)index.size());
			lo.push_back(l);
			hi.push_back(h);
			obj.push_back(o);
		}
	} rows, cols;
	int nrows = 0, ncols = 0; // with the pending ones
	bool rows_added = false;  // since the last solve: dual simplex next
	bool solved = false;
	bool integer = false;
	int algorithm = 0;  // 0: by what changed, 1 dual, 2 primal
	int iterations = 0; // the last solve's, with its settling
};

static void flush(struct clp *c)
{
	struct clp::pending &r = c->rows, &k = c->cols;

	if (r.count()) {
		c->m.addRows((int)r.count(), r.lo.data(), r.hi.data(), r.start.data(),
			     r.index.data(), r.value.data());
		r.clear();
	}
	if (k.count()) {
		c->m.addColumns((int)k.count(), k.lo.data(), k.hi.data(), k.obj.data(),
				k.start.data(), k.index.data(), k.value.data());
		k.clear();
	}
}

static double inf(double v)
{
	return std::isinf(v) ? (v > 0 ? COIN_DBL_MAX : -COIN_DBL_MAX) : v;
}

static struct clp *clp_new(int ncols)
{
	struct clp *c = new (std::nothrow) struct clp;

	if (!c)
		abort();
	c->m.passInMessageHandler(&c->quiet);
	c->m.setLogLevel(0);
	c->m.resize(0, ncols);
	c->ncols = ncols;
	Stop stop;
	stop.call = &c->stop;
	c->m.passInEventHandler(&stop); // cloned: the clone points at c->stop
	return c;
}

static void clp_free(struct clp *c)
{
	delete c;
}

static int clp_nrows(const struct clp *c)
{
	return c->nrows;
}

static int clp_add_col(struct clp *c, double obj, int n, const int *rows, const double *vals)
{
	if (c->rows.count())
		flush(c);
	c->cols.add(n, rows, vals, 0.0, COIN_DBL_MAX, obj);
	return c->ncols++;
}

static int clp_add_row(struct clp *c, int n, const int *cols, const double *vals, double lo,
		       double hi)
{
	if (c->cols.count())
		flush(c);
	c->rows.add(n, cols, vals, inf(lo), inf(hi), 0);
	c->rows_added = true;
	return c->nrows++;
}

static void clp_maximize(struct clp *c, bool maximize)
{
	c->m.setOptimizationDirection(maximize ? -1.0 : 1.0);
}

static void clp_set_obj(struct clp *c, int col, double v)
{
	flush(c);
	c->m.setObjectiveCoefficient(col, v);
}

static void clp_set_bounds(struct clp *c, int col, double lo, double hi)
{
	flush(c);
	c->m.setColumnBounds(col, inf(lo), inf(hi));
}

static void clp_set_integer(struct clp *c)
{
	c->integer = true;
}

static void clp_set_scaling(struct clp *c, int mode)
{
	c->m.scaling(mode);
}

static void clp_set_algorithm(struct clp *c, int which)
{
	c->algorithm = which;
}

// The first count above 1 holds for the model's life (its matrix points
// at the pool): a model is made for one request, on one count.
static void clp_set_threads(struct clp *c, int threads)
{
	if (threads > 1 && !c->workers)
		c->workers.reset(new Workers((unsigned)threads));
}

// The pricing split over the pool: Clp's matrix, once it has one, in the
// subclass that splits it (its copy, the same columns). Clp keeps the
// class as rows and columns are added.
static void split(struct clp *c)
{
	ClpMatrixBase *m = c->m.clpMatrix();
	ClpPackedMatrix *pm;

	if (!c->workers || !m || dynamic_cast<SplitMatrix *>(m) ||
	    !(pm = dynamic_cast<ClpPackedMatrix *>(m)))
		return;
	c->m.replaceMatrix(new SplitMatrix(*pm, c->workers.get()), true);
}

static void clp_reset_basis(struct clp *c)
{
	flush(c);
	c->m.allSlackBasis(true);
	c->solved = false;
}

// Whether a nonbasic column's reduced cost is past Clp's dual tolerance
// the wrong way: the basis not dual feasible to it.
static bool dual_short(const ClpSimplex &m)
{
	const double *dj = m.dualColumnSolution();
	double dir = m.optimizationDirection(), tol = m.dualTolerance();

	for (int j = 0; dj && j < m.numberColumns(); j++) {
		ClpSimplex::Status st = m.getColumnStatus(j);

		if ((st == ClpSimplex::atLowerBound && dir * dj[j] < -tol) ||
		    (st == ClpSimplex::atUpperBound && dir * dj[j] > tol))
			return true;
	}
	return false;
}

// A cut loop's dual solve that Clp finished by its primal clean-up (the
// dual's last basis had dual infeasibilities once its cost perturbation
// was taken off; the clean-up often pivots nothing) ends on a basis dual
// feasible only to about Clp's tolerance, some reduced costs at -1e-7 or
// just inside. The next solve, after the next cuts, is the dual again,
// and from such a basis Clp's dual set the columns it found dual
// infeasible at their fake bounds (1e10: primal infeasibilities of 1e12)
// and handed the whole solve, at its first iteration, to the primal
// simplex from a primal infeasible basis: 100-550 primal iterations where
// a dual re-solve takes tens (256-GPU model W allgather: 51 of 205 cut LP
// solves, half the LP's CPU). So such a solve (or one left with a reduced
// cost past the tolerance) is settled where it ends: the primal simplex,
// at a dual tolerance SETTLE_TOL times Clp's, pivots those few columns
// (17 iterations at most there) to a basis dual feasible well within the
// tolerance, from which the next dual starts as it should (2 of 181
// solves handed over). The optimum's value is the same to the tolerance;
// the vertex may differ, and with it the cuts the next rounds find. At
// 1e-2 times (LP CPU 1.25 -> 0.6 s, 169 solves, where 1e-3 takes 0.9 s)
// one exact R* moved by 1e-12 (no-nvlink-3's allgather), here by an ulp.
#define SETTLE_TOL 1e-3

static void settle(struct clp *c)
{
	if (c->m.status() != 0 || (!c->stop.cleaned && !dual_short(c->m)))
		return;
	double tol = c->m.dualTolerance();

	c->iterations = c->m.numberIterations();
	c->m.setDualTolerance(tol * SETTLE_TOL);
	try {
		c->m.primal();
	} catch (...) {
		c->m.setDualTolerance(tol);
		throw;
	}
	c->m.setDualTolerance(tol);
	c->iterations += c->m.numberIterations();
}

static int clp_solve(struct clp *c, int (*stop)(void *), void *ctx, char *why, size_t whylen)
{
	if (c->integer)
		return CLP_INTEGER;
	c->stop.fn = stop;
	c->stop.ctx = ctx;
	c->stop.cleaned = false;
	// Keep the factorisation's work areas from one solve to the next
	// while rows are being added (a cut loop). Clp frees them at the end
	// of every solve and allocates them again at the next: the fluid
	// pricing's cut loop solves hundreds of times in a row, and the
	// fresh areas (page faults, zeroing) were about a third of its LP
	// time. Persistent, an area is allocated again only when a bigger
	// one is needed. Set before each solve (Clp's clearing at the end
	// resets it), for the end of this one: a solve after no new rows
	// (the MCF master's, after new columns) frees them as before, which
	// kept the master's peak memory 78 MB higher (genkautz:1024,4) and
	// saved it nothing. Not Clp's startFinishOptions (keep everything
	// between solves): after added rows it rebuilds the rest anyway, and
	// the factorisation kept whole refactorises at other iterations, so
	// some solves pivot another way.
	c->m.factorization()->setPersistenceFlag(c->rows_added && c->solved ? 1 : 0);
	try {
		flush(c);
		split(c);
		// From the last basis: after new rows (cuts) the dual simplex
		// (the basis stays dual feasible), after new columns or costs
		// the primal; the first solve from Clp's own choice.
		c->iterations = -1;
		if (c->algorithm == 1 || (c->algorithm == 0 && c->solved && c->rows_added)) {
			c->m.dual();
			settle(c);
		} else if (c->algorithm == 2 || (c->algorithm == 0 && c->solved))
			c->m.primal();
		else
			c->m.dual();
		if (c->iterations < 0)
			c->iterations = c->m.numberIterations();
	} catch (CoinError &e) {
		snprintf(why, whylen, "%s", e.message().c_str());
		return -1;
	} catch (std::bad_alloc &) {
		abort(); /* as xmalloc */
	}
	c->solved = true;
	c->rows_added = false;
	c->stop.fn = nullptr;
	if (c->m.status() == 4 || c->m.status() < 0)
		snprintf(why, whylen, "numerical trouble");
	return c->m.status();
}

static double clp_objective(const struct clp *c)
{
	return c->m.objectiveValue();
}

static void clp_solution(const struct clp *c, double *x, int n)
{
	const double *v = c->m.primalColumnSolution();

	if (v && c->m.numberColumns() >= n)
		std::memcpy(x, v, (size_t)n * sizeof(double));
	else
		std::memset(x, 0, (size_t)n * sizeof(double));
}

static int clp_duals(const struct clp *c, double *y, int n)
{
	const double *d = c->m.dualRowSolution();

	if (!d || c->m.numberRows() < n)
		return -1;
	std::memcpy(y, d, (size_t)n * sizeof(double));
	return 0;
}

static int clp_iterations(const struct clp *c)
{
	return c->iterations >= 0 ? c->iterations : c->m.numberIterations();
}

static void clp_set_iteration_limit(struct clp *c, int iterations)
{
	c->m.setMaximumIterations(iterations > 0 ? iterations : COIN_INT_MAX);
}

// Rows whose slack is basic leave the basis of the others a basis: Clp
// keeps the status of the rows and columns left, so the next solve is
// warm from it.
static int clp_delete_rows(struct clp *c, int n, const int *rows)
{
	try {
		flush(c);
		c->m.deleteRows(n, rows);
	} catch (CoinError &) {
		return -1;
	} catch (std::bad_alloc &) {
		abort(); /* as xmalloc */
	}
	c->nrows -= n;
	c->rows_added = true; // the same persistence as after added rows
	return 0;
}

static int clp_write(struct clp *c, const char *path)
{
	flush(c);
	return c->m.writeMps(path) == 0 ? 0 : -1;
}

extern "C" {
extern const struct clp_api ofc_clp_api;
const struct clp_api ofc_clp_api = {
    sizeof(struct clp_api),
    clp_new,
    clp_free,
    clp_nrows,
    clp_add_col,
    clp_add_row,
    clp_maximize,
    clp_set_obj,
    clp_set_bounds,
    clp_set_integer,
    clp_set_scaling,
    clp_set_algorithm,
    clp_reset_basis,
    clp_solve,
    clp_objective,
    clp_solution,
    clp_duals,
    clp_write,
    clp_set_threads,
    clp_iterations,
    clp_set_iteration_limit,
    clp_delete_rows,
};
}
