# bash completion for pxfer and pxferd (installed as .../bash-completion/completions/pxfer and pxferd).
# Commands and options are read from the program's own --help, so they never go stale.

_pxfer_help_words() {  # PROGRAM [COMMAND...]: the subcommands and options its --help lists
  local in_subcommands=0 line
  "$@" --help 2>/dev/null | while IFS= read -r line; do
    case "$line" in
      Subcommands:*) in_subcommands=1; continue ;;
      "") in_subcommands=0; continue ;;
    esac
    if [ $in_subcommands = 1 ]; then
      set -- $line; echo "$1"
    else
      echo "$line" | grep -oE -- '(^|[ ,])--?[A-Za-z][A-Za-z0-9-]*' | tr -d ' ,'
    fi
  done
}

_pxfer() {
  local cur prev words cword
  _init_completion || return
  local prog=${words[0]} cmd=() i
  for ((i = 1; i < cword; i++)); do
    case "${words[i]}" in
      -*) ;;
      *) if [ ${#cmd[@]} -lt 2 ] && _pxfer_help_words "$prog" "${cmd[@]}" | grep -qx -- "${words[i]}"; then cmd+=("${words[i]}"); fi ;;
    esac
  done
  case "$prev" in
    --config|--tokens|--access|--cert|--key|--ca|--client-ca|--token-file|--known-hosts|--from-file|--port-file)
      _filedir; return ;;
    --root|--state-dir) _filedir -d; return ;;
    --checksum) COMPREPLY=($(compgen -W "adler32 sha256 none" -- "$cur")); return ;;
    --compress) COMPREPLY=($(compgen -W "none zstd auto" -- "$cur")); return ;;
  esac
  if [[ "$cur" == -* ]] || [ ${#cmd[@]} -gt 0 ]; then
    COMPREPLY=($(compgen -W "$(_pxfer_help_words "$prog" "${cmd[@]}")" -- "$cur"))
    [[ "$cur" != -* ]] && _filedir
  else
    COMPREPLY=($(compgen -W "$(_pxfer_help_words "$prog" | grep -v -- '^-')" -- "$cur"))
  fi
}
complete -F _pxfer pxfer pxferd
