/* ofc: the operator's command line. Everything is in libofc. */
#include "controller/cli/cli.h"

#include "util/util.h"

int main(int argc, char **argv)
{
	mem_tune_for_engines();
	return ofc_cli_main(argc, argv);
}
