# bash completion for tsnmp (made by "tsnmp completion bash")
_tsnmp() {
	local cur prev words cword
	_init_completion -n : 2>/dev/null || { cur=${COMP_WORDS[COMP_CWORD]}; prev=${COMP_WORDS[COMP_CWORD-1]}; words=("${COMP_WORDS[@]}"); cword=$COMP_CWORD; }
	local commands="get getnext bulkget walk bulkwalk set table trap inform translate trapd status df netstat delta usm vacm cert exporter generate bench completion help"
	local common="-h --help -V --version -v -c -u -l -a -A -x -X -3m -3M -3k -3K -e -E -n -r -t -T --adaptive -T -m -M -O -I -d -D"
	if [[ $cword -eq 1 ]]; then
		COMPREPLY=($(compgen -W "$commands" -- "$cur"))
		return
	fi
	local cmd=${words[1]} app=""
	case $cmd in
	get) app="-Cf" ;;
	getnext) app="-Cf" ;;
	bulkget) app="-Cn -Cr" ;;
	walk) app="-Cc -Ci -CI -Cp -CE" ;;
	bulkwalk) app="-Cn -Cr -Cc -Ci -CI -Cp" ;;
	table) app="-Cb -Ci -CH -Ch -Cf -Cw -Cl -Cr -CB" ;;
	trap) app="-Ci" ;;
	translate) app="-m -M -On -Of -Os -OS -Ou -IR -Td -Tp -Ta -TB -Tz -To -Tl -Ts" ;;
	df) app="-Cu -Ch -CH" ;;
	netstat) app="-Ca -Cn -Cv -Cfinet -Cfinet6 -Cp -Cr -Ci -Cw -CI -Cs" ;;
	delta) app="-Cp -Cs -Ck -Ct -CT -Cm -Cv -CP -CF -CS -Cl" ;;
	usm) app="-CE -Cp -Cw -Ca -Cx -Ck" ;;
	vacm) app="-Ce" ;;
	help) COMPREPLY=($(compgen -W "$commands" -- "$cur")); return ;;
	completion) COMPREPLY=($(compgen -W "bash zsh" -- "$cur")); return ;;
	esac
	case $prev in
	-v) COMPREPLY=($(compgen -W "1 2c 3" -- "$cur")); return ;;
	-l) COMPREPLY=($(compgen -W "noAuthNoPriv authNoPriv authPriv" -- "$cur")); return ;;
	-a) COMPREPLY=($(compgen -W "MD5 SHA SHA-224 SHA-256 SHA-384 SHA-512" -- "$cur")); return ;;
	-x) COMPREPLY=($(compgen -W "DES AES AES128 AES192 AES256 AES192C AES256C" -- "$cur")); return ;;
	-M) compopt -o nospace 2>/dev/null; COMPREPLY=($(compgen -d -- "$cur")); return ;;
	-m) COMPREPLY=($(compgen -W "ALL $(tsnmp completion modules 2>/dev/null)" -- "$cur")); return ;;
	-c|-u|-A|-X|-e|-E|-n|-r|-t|-T|-O|-I) return ;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$common $app" -- "$cur"))
		return
	fi
	# MIB names, with the -m and -M of the command line.
	local i mibargs=()
	for ((i = 2; i < cword; i++)); do
		case ${words[i]} in
		-m|-M) mibargs+=("${words[i]}" "${words[i+1]}") ;;
		esac
	done
	COMPREPLY=($(tsnmp completion names "${mibargs[@]}" -- "$cur" 2>/dev/null))
}
complete -F _tsnmp tsnmp
