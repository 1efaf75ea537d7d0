/* Private to sched/: the tables the verifier keeps what nodes hold in
 * (seglist, piecemap, foldmap), explicitly (verify*.c) or by symmetry
 * (verify_reduced*.c), and the sorting and hashing they share. */
#ifndef OFC_SCHED_INTERNAL_H
#define OFC_SCHED_INTERNAL_H

#include "sched/sched.h"

/* schedule.c's shapes, shared with the expansion written as it goes
 * (reduced_write.c): the JSON members before the steps, for nsteps steps
 * and ntransfers transfers; one transfer in JSON and as a text line;
 * whether a schedule's transfers are WDM lightpaths. */
void sched_write_json_head(struct json_writer *w, const struct schedule *s, uint32_t nsteps,
			   size_t ntransfers);
void sched_write_json_xfer(struct json_writer *w, const struct schedule *s, const struct xfer *x,
			   bool wdm);
void sched_write_text_xfer(FILE *out, const struct schedule *s, const struct xfer *x, bool wdm);
bool sched_is_wdm(const struct schedule *s);

/* Program transfer x's j-th block (a span cut into its blocks) translated
 * by g, as sched_reduced_expand writes it. */
struct xfer sched_reduced_piece(const struct sched_reduced *r, const struct xfer *x, uint32_t j,
				uint32_t g);

/* Sorted, disjoint pieces [lo, hi) of a block with what was folded into
 * each (seglist.c): the verifier's state per (node, block), explicit
 * (verify*.c) or by symmetry (verify_reduced*.c). */
struct seg {
	uint32_t lo, hi;
	uint32_t count;
	uint64_t hash;
};

struct seglist {
	uint32_t n, cap;
	struct seg *v;
};

void seglist_push(struct seglist *l, struct seg s);
/* Copy mode: is [lo, hi) covered; add it, returning how much was there. */
bool seglist_covers(const struct seglist *l, uint32_t lo, uint32_t hi);
uint64_t seglist_add(struct seglist *l, uint32_t lo, uint32_t hi);
/* Reduce mode: over [lo, hi) fold (count, hash) in (reduce) or write it. */
void seglist_fold(struct seglist *l, uint32_t lo, uint32_t hi, bool reduce, uint32_t count,
		  uint64_t hash);
/* The reduce weights' mixer (splitmix64). */
uint64_t sched_mix64(uint64_t x);

/* Copy mode's state, key -> what is held of that (node, block): one piece
 * [lo, hi) inline (what nearly every block is: a path's piece moves on its
 * own), or, when lo == PIECE_LIST (no offset is), the interval list
 * lists[hi]; all zero is nothing held. Keyed two ways: dense
 * (piecemap_dense: an array indexed by the key, from calloc, so only the
 * pages of keys used cost memory), or open addressing, 16 bytes a key. A
 * single piece needs no allocation either way. 8 bytes, as the pieces of
 * a block and the blocks of a path are what the check reads in a cache
 * miss each, and zeroing fresh pages is slow. */
struct piece {
	uint32_t lo, hi;
};
#define PIECE_LIST UINT32_MAX
struct piece_slot {
	uint64_t key;
	struct piece p;
};
#define PIECE_KEY_NONE UINT64_MAX
struct piecemap {
	struct piece_slot *e; /* hashed */
	size_t cap, used;
	uint64_t nblocks;    /* hashed by block (piecemap_blocks) */
	struct piece *dense; /* or dense, keys below ndense */
	size_t ndense;
	struct seglist *lists;
	size_t nlists, cap_lists;
};
/* Dense keys 0 .. nkeys - 1 (before any other call). */
void piecemap_dense(struct piecemap *m, size_t nkeys);
/* Hashed keys, with room for nkeys before it grows (before any other
 * call; 16 bytes a slot, 16 KB at least). */
void piecemap_hashed(struct piecemap *m, size_t nkeys);
/* Hashed keys node * nblocks + block placed by block, a block's keys in
 * its own stretch of the table (before any other call), with room for
 * nkeys at first (a growth copies the table into one twice its size,
 * both in memory at once). */
void piecemap_blocks(struct piecemap *m, uint64_t nblocks, size_t nkeys);
/* key's entry (created empty when asked), NULL when absent (dense: when it
 * holds nothing). */
struct piece *piecemap_get(struct piecemap *m, uint64_t key, bool create);
/* Start fetching key's entry (the step loops ask some keys ahead). */
void piecemap_prefetch(const struct piecemap *m, uint64_t key);
bool piece_covers(const struct piecemap *m, const struct piece *e, uint32_t lo, uint32_t hi);
/* Add [lo, hi) to e; returns how much of it e held already. */
uint64_t piece_add(struct piecemap *m, struct piece *e, uint32_t lo, uint32_t hi);
/* Whether e holds the whole block [0, SCHED_ONE). */
bool piece_whole(const struct piece *e);
/* Drop e's pieces. */
void piece_clear(struct piecemap *m, struct piece *e);
void piecemap_free(struct piecemap *m);

/* The all-to-all checks by sorting (verify_reduced_a2a.c, verify_a2a.c) turn transfers
 * into 8-byte events. A path's piece is the same at every hop, so a
 * program has few distinct pieces [lo, hi): numbered on first sight, an
 * event holds the number (a table half full at most, in L1 for the few
 * of a reduced program, in L2 for the 2,740 of genkautz:1024,4's path
 * lowering). Up to max of them (1 << bits, at most SCHED_PIECES); past
 * that n is 0 and they go unnumbered. */
#define SCHED_PIECE_BITS 14
#define SCHED_PIECES	 (1u << (SCHED_PIECE_BITS - 1))
struct piece_numbers {
	uint32_t n, max;
	struct piece piece[SCHED_PIECES];
	uint16_t slot[2 * SCHED_PIECES]; /* open addressing: piece number + 1, or 0 */
};
void piece_numbers_init(struct piece_numbers *p, unsigned bits);
uint64_t piece_number(struct piece_numbers *p, uint32_t lo, uint32_t hi);
/* Stable LSD radix sort of ev[0 .. n - 1] by the words' top shift bits;
 * tmp holds n. Returns the sorted array, ev or tmp. */
uint64_t *sched_sort_top(uint64_t *ev, uint64_t *tmp, size_t n, unsigned shift);

/* Reduce mode's state, key -> the (count, weight sum) folded into each
 * part of that (node, shard), pieces covering [0, SCHED_ONE): inline up
 * to two, [0, cut) and [cut, SCHED_ONE) (cut == SCHED_ONE: one piece, the
 * second's fields zero), which is what nearly every shard is (whole, or a
 * bidirectional ring's halves); cut == FOLD_LIST: the interval list
 * lists[count[0]] instead. 32 bytes, two to a cache line, in one array
 * indexed by the key (foldmap_init: on huge pages where THP allows, not
 * initialised: the caller writes every entry it reads). Lists are allocated only
 * for entries of three pieces or more, and their slots reused. `mark` is
 * the caller's (the verifier stamps the entries a step reads there, in
 * the line it fetches anyway); the table keeps it. */
struct fold {
	uint32_t cut;
	uint32_t count[2];
	uint32_t mark;
	uint64_t hash[2];
};
#define FOLD_LIST UINT32_MAX
struct foldmap {
	struct fold *e; /* keys 0 .. n - 1 */
	size_t n;
	struct seglist *lists;
	size_t nlists, cap_lists;
	uint32_t *idle; /* list slots free again */
	size_t nidle, cap_idle;
};
void foldmap_init(struct foldmap *m, size_t nkeys);
/* e's pieces in order, *n of them: its list's, or its inline ones written
 * to buf. */
const struct seg *fold_pieces(const struct foldmap *m, const struct fold *e, struct seg buf[2],
			      uint32_t *n);
/* Over [lo, hi) fold (count, hash) in (reduce) or write it, as
 * seglist_fold. */
void fold_apply(struct foldmap *m, struct fold *e, uint32_t lo, uint32_t hi, bool reduce,
		uint32_t count, uint64_t hash);
/* An empty list's slot (one freed before, or a new one), and its return. */
uint32_t foldmap_list(struct foldmap *m);
void foldmap_unlist(struct foldmap *m, uint32_t slot);
void foldmap_free(struct foldmap *m);

#endif
