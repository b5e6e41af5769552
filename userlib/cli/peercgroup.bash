# bash completion for peercgroup(1)
_peercgroup()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
	local cmds="status serve ask peer classify help"
	local opts="--json --live --seqpacket --count --reply --help --version"
	local i cmd=
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		status|serve|ask|peer|classify|help) cmd=${COMP_WORDS[i]}; break ;;
		esac
	done
	if [[ $prev == --count ]]; then
		return
	fi
	if [[ $cur == -* ]]; then
		mapfile -t COMPREPLY < <(compgen -W "$opts" -- "$cur")
		return
	fi
	case $cmd in
	"") mapfile -t COMPREPLY < <(compgen -W "$cmds" -- "$cur") ;;
	serve|ask) mapfile -t COMPREPLY < <(compgen -f -- "$cur") ;;
	classify)
		# cgroup paths as /proc prints them: complete from the cgroup2 mount
		local base=/sys/fs/cgroup
		mapfile -t COMPREPLY < <(compgen -d -- "$base${cur:-/}" | sed "s|^$base||")
		compopt -o nospace 2>/dev/null
		;;
	esac
}
complete -F _peercgroup peercgroup
