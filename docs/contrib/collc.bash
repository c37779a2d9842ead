# bash completion for collc. The commands and each command's options come
# from collc itself (`collc --help`, `collc help CMD`), so they never drift.
_collc()
{
	local cur prev cmd opts
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD-1]}
	if [ "$COMP_CWORD" -eq 1 ]; then
		opts=$(collc --help 2>/dev/null | sed -n 's/^  \([a-z][a-z]*\) .*/\1/p')
		COMPREPLY=($(compgen -W "$opts help --help --version" -- "$cur"))
		return
	fi
	cmd=${COMP_WORDS[1]}
	if [ "$cmd" = help ]; then
		opts=$(collc --help 2>/dev/null | sed -n 's/^  \([a-z][a-z]*\) .*/\1/p')
		COMPREPLY=($(compgen -W "$opts" -- "$cur"))
		return
	fi
	case $prev in
	--target)
		# the targets `collc help build` lists (backends/backend.c's one table)
		opts=$(collc help build 2>/dev/null | sed -n '/^targets:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p')
		COMPREPLY=($(compgen -W "$opts" -- "$cur")); return ;;
	--mode) COMPREPLY=($(compgen -W "packet flow" -- "$cur")); return ;;
	--sync) COMPREPLY=($(compgen -W "rounds deps" -- "$cur")); return ;;
	--links) COMPREPLY=($(compgen -W "shared private" -- "$cur")); return ;;
	--dtype) COMPREPLY=($(compgen -W "float double int32 int64" -- "$cur")); return ;;
	--op) COMPREPLY=($(compgen -W "sum prod max min" -- "$cur")); return ;;
	--proto) COMPREPLY=($(compgen -W "Simple LL LL128" -- "$cur")); return ;;
	--topology) COMPREPLY=($(compgen -f -X '!*.coll' -- "$cur")); return ;;
	-o|--output|--plot|--plot-time|--plot-links|--resume) COMPREPLY=($(compgen -f -- "$cur")); return ;;
	esac
	if [[ $cur == -* ]]; then
		opts=$(collc help "$cmd" 2>/dev/null | grep -o -- '--[a-z][a-z-]*' | sort -u)
		COMPREPLY=($(compgen -W "$opts" -- "$cur"))
		return
	fi
	COMPREPLY=($(compgen -f -X '!*.@(coll|xml|sim|collir)' -- "$cur") $(compgen -d -- "$cur"))
}
complete -o filenames -F _collc collc
