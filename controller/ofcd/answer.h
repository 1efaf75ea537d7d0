/* A mutation's answer as the mutation worker builds it (answer.c): the
 * Response, its TransactionInfo or ConfigError, and the arena their
 * strings live in. Private to controller/ofcd/: mutation.c and batch.c
 * build answers with it. */
#ifndef OFC_CONTROLLER_OFCD_ANSWER_H
#define OFC_CONTROLLER_OFCD_ANSWER_H

#include "controller/ofcd/internal.h"

struct answer {
	struct arena a;
	Ofc__V1__Response r;
	Ofc__V1__TransactionInfo t;
	Ofc__V1__ConfigError ce;
};

/* An answer to j: its id, ticket, kind, target and who asked. */
void answer_init(struct answer *an, const struct job *j);
void answer_status(struct answer *an, Ofc__V1__Status st, const char *fmt, ...) OFC_PRINTF(3, 4);
/* A config that did not load or validate: status INVALID with its
 * position, so clients can point at the line. */
void answer_config_error(struct answer *an, const struct ofc_error *err);
/* A mutation stopped because this replica may no longer drive the devices
 * or write the state (OFC_R_FENCED): the answer says so and who leads
 * now; false (nothing written) for any other error. */
bool answer_fenced(struct ofcd *d, struct answer *an, const struct ofc_error *err);
/* The answer of a transaction that failed (rolled back or not); j's
 * outcome too. */
void answer_failed(struct job *j, struct answer *an, const struct ctl_result *res,
		   const struct ofc_error *err);

#endif
