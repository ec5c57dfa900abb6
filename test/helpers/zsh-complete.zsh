# Prints what zsh's own completion system offers for a command line, one candidate a line:
#   zsh -f test/helpers/zsh-complete.zsh FPATH_DIR 'taxprep docs upload 1001 '
# An interactive zsh runs under a pseudo-terminal (zpty) with compinit, and Tab is pressed after
# the line; `compadd` is wrapped to print the matches the real completion functions (_files
# included) computed, and a post-completion hook marks the end of the output.
zmodload zsh/zpty || exit 1
zpty shell zsh -f -i
zpty -w shell "PROMPT= ; RPROMPT= ; fpath=(${(q)1} \$fpath); autoload -Uz compinit; compinit -u -D"
# The markers are typed with an empty "" inside, so that the echo of the typed text never matches.
zpty -w shell 'compadd() { if (( ${@[(I)-[OAD]*]} )); then builtin compadd "$@"; return; fi; local -a hits; builtin compadd -A hits "$@"; local hit; for hit in $hits; do print -rn -- $'"'"'\n'"'"'"__MATCH""__:$hit"; done; }'
zpty -w shell 'finish() { print -rn -- $'"'"'\n'"'"'__DO""NE__; }'
zpty -w shell "bindkey '^I' complete-word; zstyle ':completion:*' completer _complete; comppostfuncs=(finish)"
zpty -n -w shell "$2"$'\t'
local out chunk
integer tries=0
while (( tries++ < 400 )) && [[ $out != *__DONE__* ]]; do
  zpty -r -t shell chunk && out+=$chunk || sleep 0.05
done
zpty -d shell
print -rl -- ${${(M)${(f)${out//$'\r'/}}:#__MATCH__:*}#__MATCH__:}
