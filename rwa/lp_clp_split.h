// Private to rwa/lp_clp.cc: Clp's pricing over the columns split in
// blocks over threads. A column generation master has few rows and many
// long columns (the all-to-all MCF on genkautz:1024,4: 237 rows, 3,700
// columns, 430,000 elements), and the primal simplex's steepest edge
// prices every column at every iteration (ClpPackedMatrix::transposeTimes2,
// two products per column): on one thread that is most of the master's
// time. Each column is priced with the same arithmetic as Clp's own loop,
// whichever block it falls in, and the blocks' lists are joined in column
// order, so a solve takes the same pivots on any number of threads.
#ifndef OFC_RWA_LP_CLP_SPLIT_H
#define OFC_RWA_LP_CLP_SPLIT_H

#include <coin/ClpPackedMatrix.hpp>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

// A pool of threads kept with one Clp model (struct clp): run() hands out
// parts 0..n-1 to the workers and the calling thread, and returns when
// every part is done. Kept, not started per call: the pricing runs once
// an iteration, thousands of times a solve.
class Workers
{
      public:
	explicit Workers(unsigned threads);
	~Workers();
	Workers(const Workers &) = delete;
	Workers &operator=(const Workers &) = delete;
	unsigned size() const
	{
		return (unsigned)threads_.size() + 1;
	}
	void run(unsigned parts, const std::function<void(unsigned)> &fn);

      private:
	void loop();
	void take();

	std::vector<std::thread> threads_;
	std::mutex mu_;
	std::condition_variable start_, done_;
	const std::function<void(unsigned)> *fn_ = nullptr;
	unsigned parts_ = 0, busy_ = 0;
	std::atomic<unsigned> next_{0};
	unsigned long round_ = 0;
	bool quit_ = false;
};

// Clp's column-ordered matrix, its steepest-edge pricing split over a
// pool (not owned; NULL or one thread: Clp's own code). Only the case the
// primal simplex takes when its pivot row is dense is split (packed pi,
// reduced costs updated, no gaps, no special column copy, scaled or not);
// every other case, and a matrix under MIN_PART elements a block, is Clp's.
class SplitMatrix : public ClpPackedMatrix
{
      public:
	SplitMatrix(const ClpPackedMatrix &m, Workers *w) : ClpPackedMatrix(m), workers_(w)
	{
	}
	SplitMatrix(const SplitMatrix &) = default;
	ClpMatrixBase *clone() const override
	{
		return new SplitMatrix(*this);
	}
	int transposeTimes2(const ClpSimplex *model, const CoinIndexedVector *pi1,
			    CoinIndexedVector *dj1, const CoinIndexedVector *pi2,
			    CoinIndexedVector *spare, double *infeas, double *reducedCost,
			    double referenceIn, double devex, unsigned int *reference,
			    double *weights, double scaleFactor) override;

	// Elements a block has at least: under it, waking the threads costs
	// more than the block's products.
	static const CoinBigIndex MIN_PART = 16384;

      private:
	// What one block of columns passes on: the list Clp's loop builds,
	// in column order.
	struct part {
		std::vector<int> index;
		std::vector<double> value;
		int count = 0;
	};
	Workers *workers_;
	std::vector<part> parts_;
	std::vector<int> first_; // the blocks' first columns, and the end
};

#endif
