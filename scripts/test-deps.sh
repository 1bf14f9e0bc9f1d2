#!/usr/bin/env bash
# Installs what the tests need: the linters (pinned, into GOPATH/bin), and,
# when run as root on Debian, the peers the interoperability tests talk to.
# Idempotent: a second run installs nothing and takes about a second.
#
#   scripts/test-deps.sh          # what this user can install
#   scripts/test-deps.sh --check  # only report what is missing
set -euo pipefail
cd "$(dirname "$0")/.."

check=false
[ "${1:-}" = "--check" ] && check=true

# Go tools, pinned so that every machine lints alike.
staticcheck_version=2025.1.1
gobin=$(go env GOPATH)/bin
if ! [ -x "$gobin/staticcheck" ] && ! command -v staticcheck >/dev/null; then
	if $check; then
		echo "missing: staticcheck (go install honnef.co/go/tools/cmd/staticcheck@$staticcheck_version)"
	else
		echo "test-deps: installing staticcheck $staticcheck_version"
		go install "honnef.co/go/tools/cmd/staticcheck@$staticcheck_version" ||
			go install honnef.co/go/tools/cmd/staticcheck@latest
	fi
fi

# Debian packages of the peers. Each line: package, then the command that
# shows it is there.
debs=(
	"snmp snmpget"
	"snmpd snmpd"
	"snmptrapd snmptrapd"
	"openssh-server sshd"
	"openssh-client ssh"
	"tcpdump tcpdump"
	"zsh zsh"
	"nftables nft"
	"iproute2 ip"
	"procps sysctl"
	"e2fsprogs mkfs.ext4"
	"util-linux unshare"
	"systemd systemctl"
	"mount mount"
	"openssl openssl"
	"make make"
	"chromium chromium"
	"chromium-driver chromedriver"
	"prometheus-snmp-exporter prometheus-snmp-exporter"
	"prometheus prometheus"
)
missing=()
for d in "${debs[@]}"; do
	set -- $d
	PATH=$PATH:/usr/sbin:/sbin command -v "$2" >/dev/null || missing+=("$1")
done
if [ ${#missing[@]} -gt 0 ]; then
	if $check || [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
		echo "missing Debian packages (as root: apt-get install ${missing[*]}); interop tests skip without them, or fail under CI=true"
	else
		echo "test-deps: installing ${missing[*]}"
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq
		apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
	fi
fi

# Net-SNMP 5.9.5 (TLS 1.2/1.3, DTLS, SSH), from the workplace's peers folder.
if ! [ -x /opt/netsnmp-src/bin/snmpget ]; then
	inst=
	for d in ../shared/peers /work/shared/peers; do
		[ -x "$d/install-netsnmp-5.9.5.sh" ] && inst=$d/install-netsnmp-5.9.5.sh && break
	done
	if [ -z "$inst" ]; then
		echo "missing: Net-SNMP 5.9.5 under /opt/netsnmp-src (its installer, shared/peers/install-netsnmp-5.9.5.sh, is not beside this checkout)"
	elif $check || [ "$(id -u)" != 0 ]; then
		echo "missing: Net-SNMP 5.9.5 (as root: $inst)"
	else
		echo "test-deps: installing Net-SNMP 5.9.5"
		"$inst" >/dev/null
	fi
fi

# Python peers (pysnmp).
if command -v python3 >/dev/null && ! python3 -c 'import pysnmp' 2>/dev/null; then
	if $check; then
		echo "missing: pysnmp (python3 -m pip install pysnmp)"
	else
		echo "test-deps: installing pysnmp"
		python3 -m pip install -q pysnmp 2>/dev/null ||
			python3 -m pip install -q --break-system-packages pysnmp
	fi
fi
