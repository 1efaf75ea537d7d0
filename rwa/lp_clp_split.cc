// Clp's steepest-edge pricing split in blocks of columns over a pool of
// threads kept with the model (rwa/lp_clp_split.h says why and what stays
// the same). Part of the plugin libofc-clp.so, called from rwa/lp_clp.cc.
#include "rwa/lp_clp_split.h"

#include <coin/ClpSimplex.hpp>
#include <coin/CoinHelperFunctions.hpp>
#include <coin/CoinIndexedVector.hpp>

#include <algorithm>
#include <cmath>

Workers::Workers(unsigned threads)
{
	for (unsigned i = 1; i < threads; i++)
		threads_.emplace_back(&Workers::loop, this);
}

Workers::~Workers()
{
	{
		std::lock_guard<std::mutex> lk(mu_);
		quit_ = true;
	}
	start_.notify_all();
	for (std::thread &t : threads_)
		t.join();
}

void Workers::take()
{
	for (;;) {
		unsigned p = next_.fetch_add(1, std::memory_order_relaxed);

		if (p >= parts_)
			return;
		(*fn_)(p);
	}
}

// Each worker wakes once a round, takes parts until none is left, and
// says it is done: run() returns only when every worker has, so none
// still reads fn after it.
void Workers::loop()
{
	unsigned long seen = 0;

	for (;;) {
		{
			std::unique_lock<std::mutex> lk(mu_);
			start_.wait(lk, [&] { return quit_ || round_ != seen; });
			if (quit_)
				return;
			seen = round_;
		}
		take();
		std::lock_guard<std::mutex> lk(mu_);
		if (--busy_ == 0)
			done_.notify_one();
	}
}

void Workers::run(unsigned parts, const std::function<void(unsigned)> &fn)
{
	{
		std::lock_guard<std::mutex> lk(mu_);
		fn_ = &fn;
		parts_ = parts;
		next_.store(0, std::memory_order_relaxed);
		busy_ = (unsigned)threads_.size();
		round_++;
	}
	start_.notify_all();
	take();
	std::unique_lock<std::mutex> lk(mu_);
	done_.wait(lk, [&] { return busy_ == 0; });
	fn_ = nullptr;
}

#define reference(i) (((reference[(i) >> 5] >> ((i)&31)) & 1) != 0)

// One column's pricing, as ClpPackedMatrix::transposeTimes2's loops do it
// (Clp 1.17, the packed case, reduced costs updated; columnScale NULL: the
// loop over an unscaled matrix or Clp's scaled copy, else the one that
// scales as it goes): the same operations in the same order. Returns
// whether the column joins the list, with its value in *out.
static inline bool price_column(const ClpSimplex *model, int iColumn, CoinBigIndex start,
				CoinBigIndex end, const int *row, const double *element,
				const double *pi, const double *piWeight, const double *columnScale,
				double zeroTolerance, double dualTolerance, double referenceIn,
				double devex, const unsigned int *reference, double *weights,
				double scaleFactor, double *reducedCost, double *infeas,
				double *out)
{
	ClpSimplex::Status status = model->getStatus(iColumn);

	if (status == ClpSimplex::basic || status == ClpSimplex::isFixed)
		return false;
	double value = 0.0;
	for (CoinBigIndex j = start; j < end; j++)
		value -= pi[row[j]] * element[j];
	if (columnScale)
		value *= columnScale[iColumn];
	if (!(std::fabs(value) > zeroTolerance))
		return false;
	double modification = 0.0;
	for (CoinBigIndex j = start; j < end; j++)
		modification += piWeight[row[j]] * element[j];
	if (columnScale)
		modification *= columnScale[iColumn];
	double thisWeight = weights[iColumn];
	double pivot = value * scaleFactor;
	double pivotSquared = pivot * pivot;
	thisWeight += pivotSquared * devex + pivot * modification;
	if (thisWeight < DEVEX_TRY_NORM) {
		if (referenceIn < 0.0) {
			// steepest
			thisWeight = CoinMax(DEVEX_TRY_NORM, DEVEX_ADD_ONE + pivotSquared);
		} else {
			// exact
			thisWeight = referenceIn * pivotSquared;
			if (reference(iColumn))
				thisWeight += 1.0;
			thisWeight = CoinMax(thisWeight, DEVEX_TRY_NORM);
		}
	}
	weights[iColumn] = thisWeight;
	value = reducedCost[iColumn] - value;
	reducedCost[iColumn] = value;
	switch (status) {
	case ClpSimplex::basic:
	case ClpSimplex::isFixed:
		return false;
	case ClpSimplex::isFree:
	case ClpSimplex::superBasic:
		if (std::fabs(value) > FREE_ACCEPT * dualTolerance) {
			// biased towards free (but only if reasonable)
			value *= FREE_BIAS;
			value *= value;
			break;
		}
		*out = 0.0;
		return true;
	case ClpSimplex::atUpperBound:
		if (value > dualTolerance) {
			value *= value;
			break;
		}
		*out = 0.0;
		return true;
	case ClpSimplex::atLowerBound:
		if (value < -dualTolerance) {
			value *= value;
			break;
		}
		*out = 0.0;
		return true;
	}
	// the square, in the list unless already there
	if (infeas[iColumn]) {
		infeas[iColumn] = value;
		return false;
	}
	*out = value;
	return true;
}

int SplitMatrix::transposeTimes2(const ClpSimplex *model, const CoinIndexedVector *pi1,
				 CoinIndexedVector *dj1, const CoinIndexedVector *pi2,
				 CoinIndexedVector *spare, double *infeas, double *reducedCost,
				 double referenceIn, double devex, unsigned int *reference,
				 double *weights, double scaleFactor)
{
	const double *rowScale = model->rowScale();
	const CoinPackedMatrix *m = matrix_;
	int ncols = numberActiveColumns_;

	// Clp's scaled copy, where it keeps one, is priced as unscaled
	if (rowScale && model->clpScaledMatrix()) {
		rowScale = nullptr;
		m = model->clpScaledMatrix()->getPackedMatrix();
	}
	const CoinBigIndex *columnStart = m->getVectorStarts();
	CoinBigIndex total = ncols > 0 ? columnStart[ncols] - columnStart[0] : 0;
	unsigned nparts =
	    workers_ ? (unsigned)std::min<CoinBigIndex>(workers_->size(), total / MIN_PART) : 0;

	if (nparts < 2 || !pi1->packedMode() || pi2->packedMode() || scaleFactor == 0.0 ||
	    !infeas || columnCopy_ || m->hasGaps())
		return ClpPackedMatrix::transposeTimes2(model, pi1, dj1, pi2, spare, infeas,
							reducedCost, referenceIn, devex, reference,
							weights, scaleFactor);
	const double *piOld = pi1->denseVector();
	const int *whichRow = pi1->getIndices();
	int numberInRowArray = pi1->getNumElements();
	double zeroTolerance = model->zeroTolerance();
	// as Clp: the tolerance a little wider where the duals have errors
	double dualTolerance =
	    model->currentDualTolerance() + CoinMin(1.0e-2, model->largestDualError());
	const int *row = m->getIndices();
	const double *element = m->getElements();
	const double *columnScale = rowScale ? model->columnScale() : nullptr;
	double *piWeight = pi2->denseVector();
	double *pi = spare->denseVector();

	// pi expanded (and scaled, with piWeight), as Clp does before its loop
	if (!rowScale) {
		for (int i = 0; i < numberInRowArray; i++)
			pi[whichRow[i]] = piOld[i];
	} else {
		for (int i = 0; i < numberInRowArray; i++)
			pi[whichRow[i]] = piOld[i] * rowScale[whichRow[i]];
		for (int i = 0; i < pi2->getNumElements(); i++) {
			int iRow = pi2->getIndices()[i];

			piWeight[iRow] *= rowScale[iRow];
		}
	}
	// Blocks of about equal elements: block k starts at the first column
	// at or past k/nparts of them. Where they fall changes no column's
	// arithmetic.
	parts_.resize(nparts);
	first_.resize(nparts + 1);
	for (unsigned k = 0; k <= nparts; k++) {
		CoinBigIndex at = columnStart[0] + (CoinBigIndex)((double)total * k / nparts);

		first_[k] = k == nparts
				? ncols
				: (int)(std::lower_bound(columnStart, columnStart + ncols, at) -
					columnStart);
	}
	workers_->run(nparts, [&](unsigned k) {
		part &p = parts_[k];
		int lo = first_[k], hi = first_[k + 1];

		if (p.index.size() < (size_t)(hi - lo)) {
			p.index.resize(hi - lo);
			p.value.resize(hi - lo);
		}
		p.count = 0;
		for (int c = lo; c < hi; c++) {
			double v;

			if (price_column(model, c, columnStart[c], columnStart[c + 1], row, element,
					 pi, piWeight, columnScale, zeroTolerance, dualTolerance,
					 referenceIn, devex, reference, weights, scaleFactor,
					 reducedCost, infeas, &v)) {
				p.index[p.count] = c;
				p.value[p.count++] = v;
			}
		}
	});
	// the blocks' lists joined in column order: the list Clp's loop makes
	int *index = dj1->getIndices();
	double *array = dj1->denseVector();
	int n = 0;

	for (const part &p : parts_) {
		std::copy(p.index.begin(), p.index.begin() + p.count, index + n);
		std::copy(p.value.begin(), p.value.begin() + p.count, array + n);
		n += p.count;
	}
	// zero out pi, as Clp
	int numberRows = model->numberRows();

	if (numberInRowArray * 4 < numberRows) {
		for (int i = 0; i < numberInRowArray; i++)
			pi[whichRow[i]] = 0.0;
	} else {
		CoinZeroN(pi, numberRows);
	}
	dj1->setNumElements(n);
	spare->setNumElements(0);
	dj1->setPackedMode(true);
	return 1;
}
