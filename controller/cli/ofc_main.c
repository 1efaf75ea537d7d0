/* ofc: the operator's command line. Everything is in libofc. */
#include "controller/cli/cli.h"

int main(int argc, char **argv)
{
	return ofc_cli_main(argc, argv);
}
