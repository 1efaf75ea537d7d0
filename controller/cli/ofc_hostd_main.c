/* ofc-hostd: a host's agent (docs/hosts.md). Everything is in libofc. */
#include "controller/cli/cli.h"

int main(int argc, char **argv)
{
	return ofc_hostd_main(argc, argv);
}
