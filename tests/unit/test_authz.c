/* Who may cancel a queued request (authz_may_cancel): an admin and a
 * socket client any; a tenant only its own requests, on partitions its
 * policy names. A pattern another tenant shares (slurm-job-*) names what
 * each may ask for, not whose requests it may undo. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "controller/ofcd/internal.h"

static char *slurm_jobs[] = {"slurm-job-*"};

static Ofc__V1__Principal principal(char *identity, Ofc__V1__Principal__Role role)
{
	Ofc__V1__Principal p;

	ofc__v1__principal__init(&p);
	p.identity = identity;
	p.has_role = 1;
	p.role = role;
	p.n_partitions = 1;
	p.partitions = slurm_jobs;
	return p;
}

static void test_tenant_cancels_only_its_own(void **state)
{
	Ofc__V1__Principal a = principal("cn:tenant-a", OFC__V1__PRINCIPAL__ROLE__ROLE_TENANT);
	Ofc__V1__Principal c = principal("cn:tenant-c", OFC__V1__PRINCIPAL__ROLE__ROLE_TENANT);
	struct job j = {.partition = "slurm-job-77", .principal = "cn:tenant-a"};

	(void)state;
	assert_true(authz_may_cancel(&a, &j));
	/* tenant-c's pattern matches the partition, but the request is a's */
	assert_true(authz_owns(&c, j.partition));
	assert_false(authz_may_cancel(&c, &j));
	/* a's own request on a partition its policy does not name */
	j.partition = "other-77";
	assert_false(authz_may_cancel(&a, &j));
	/* a request of no partition (a whole-fabric change), and none at all */
	j.partition = NULL;
	assert_false(authz_may_cancel(&a, &j));
	assert_false(authz_may_cancel(&a, NULL));
}

static void test_admin_and_socket_cancel_any(void **state)
{
	Ofc__V1__Principal admin = principal("cn:admin", OFC__V1__PRINCIPAL__ROLE__ROLE_ADMIN);
	struct job j = {.partition = "slurm-job-77", .principal = "cn:tenant-a"};

	(void)state;
	assert_true(authz_may_cancel(&admin, &j));
	assert_true(authz_may_cancel(NULL, &j)); /* a socket's client */
	assert_true(authz_may_cancel(&admin, NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_tenant_cancels_only_its_own),
	    cmocka_unit_test(test_admin_and_socket_cancel_any),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
