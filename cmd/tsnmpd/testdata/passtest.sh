#!/bin/sh
# A pass program in the style of Net-SNMP's documentation: it serves three
# objects under BASE and is called as PROG -g OID, PROG -n OID or
# PROG -s OID TYPE VALUE.
BASE=.1.3.6.1.4.1.8072.2.255
answer() {
	case "$1" in
	$BASE.1.0) echo "$BASE.1.0"; echo string; echo "Life, the Universe and Everything" ;;
	$BASE.2.1) echo "$BASE.2.1"; echo integer; echo 42 ;;
	$BASE.2.2) echo "$BASE.2.2"; echo gauge; echo 7 ;;
	$BASE.3.0) echo "$BASE.3.0"; echo objectid; echo .1.3.6.1.4.1.8072.3.2.10 ;;
	$BASE.4.0) echo "$BASE.4.0"; echo ipaddress; echo 127.0.0.1 ;;
	$BASE.5.0) echo "$BASE.5.0"; echo timeticks; echo 12345 ;;
	$BASE.6.0) echo "$BASE.6.0"; echo counter; echo 99 ;;
	esac
}
case "$1" in
-g) answer "$2" ;;
-n)
	for o in $BASE.1.0 $BASE.2.1 $BASE.2.2 $BASE.3.0 $BASE.4.0 $BASE.5.0 $BASE.6.0; do
		# The first object after $2: compare as OIDs with sort -V.
		if [ "$o" != "$2" ] && [ "$(printf '%s\n%s\n' "$2" "$o" | sed 's/^\.//' | sort -t. -k1,1n -k2,2n -k3,3n -k4,4n -k5,5n -k6,6n -k7,7n -k8,8n -k9,9n -k10,10n -k11,11n -k12,12n | head -n1)" = "${2#.}" ]; then
			answer "$o"
			exit 0
		fi
	done ;;
-s) echo not-writable ;;
esac
