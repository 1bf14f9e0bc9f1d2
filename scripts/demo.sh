#!/usr/bin/env bash
# Start tsnmpd with its zero-config default in a temporary state directory,
# walk it with tsnmp over SNMPv2c and SNMPv3 (authPriv, the generated user),
# then stop it.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${BIN:-bin}
tmp=$(mktemp -d)
log=$tmp/tsnmpd.log
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

echo "== starting tsnmpd (state in $tmp/tsnmp)"
XDG_STATE_HOME=$tmp "$bin/tsnmpd" >"$log" 2>&1 &
pid=$!
for _ in $(seq 50); do
	grep -q 'tsnmpd started' "$log" 2>/dev/null && break
	if ! kill -0 "$pid" 2>/dev/null; then
		cat "$log"
		echo "demo: tsnmpd did not start (is port 1161 in use?)" >&2
		exit 1
	fi
	sleep 0.1
done
sed -n '/created the SNMPv3 user/,/tsnmp walk/p' "$log"

echo "== tsnmp walk -v2c -c public udp:127.0.0.1:1161 system"
"$bin/tsnmp" walk -v2c -c public udp:127.0.0.1:1161 system

auth=$(awk '$1=="authPassword"{print $2}' "$tmp/tsnmp/default-user.conf")
priv=$(awk '$1=="privPassword"{print $2}' "$tmp/tsnmp/default-user.conf")
echo "== tsnmp get -v3 -l authPriv -u tsnmp -a SHA-256 -x AES tcp:[::1]:1161 sysUpTime.0 ifNumber.0"
"$bin/tsnmp" get -v3 -l authPriv -u tsnmp -a SHA-256 -A "$auth" -x AES -X "$priv" 'tcp:[::1]:1161' sysUpTime.0 ifNumber.0

echo "== tsnmp bulkwalk -v2c -c public udp:127.0.0.1:1161 ifName"
"$bin/tsnmp" bulkwalk -v2c -c public udp:127.0.0.1:1161 ifName
echo "== stopping tsnmpd"
