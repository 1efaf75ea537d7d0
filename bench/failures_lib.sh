# Shared by the failure benches (sourced): the same failures for each.
# shellcheck shell=sh
# 1% of the ports of HOSTS hosts (4 each), none two of one host: "hU:P ..."
ports_percent() {
	python3 - "$1" <<'EOF'
import sys
n, x, used, out = int(sys.argv[1]), 0x9e3779b97f4a7c15, set(), []
while len(out) < 4 * n // 100:
    x ^= (x << 13) & (2**64 - 1); x ^= x >> 7; x ^= (x << 17) & (2**64 - 1)
    u, p = x % n, (x >> 32) % 4
    if u not in used:
        used.add(u)
        out.append('h%d:%d' % (u, p))
print(' '.join(out))
EOF
}
