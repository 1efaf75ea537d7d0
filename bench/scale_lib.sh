# Shared by the scale benches (sourced): the family's spec for N nodes.
# spec FAMILY N: hypercube:log2 N, the squarest torus:AxB of N = 2^k,
# genkautz:N,4, or the WDM ring's label.
spec() { # FAMILY N
	case $1 in
	hypercube) echo "hypercube:$(python3 -c "import math; print(int(math.log2($2)))")" ;;
	torus)
		python3 -c "
import math
n = $2; a = 2 ** (int(math.log2(n)) // 2)
print('torus:%dx%d' % (a, n // a))" ;;
	genkautz) echo "genkautz:$2,4" ;;
	ring) echo "ring:$2 (W=64)" ;;
	esac
}
