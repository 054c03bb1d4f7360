#!/bin/sh
# The generated man page renders without warnings and covers every command
# that `tailbone --help` lists, with each command's own options.
# usage: tests/consumer/man_check.sh build/tailbone.1 build/tailbone
set -eu
page=$1
tb=$2
command -v groff >/dev/null || { echo "groff absent: skipped"; exit 77; }
# -k: preconv, as man(1) runs it (the help texts hold UTF-8: →, °, ², …)
warn=$(groff -k -man -Tutf8 -ww -z "$page" 2>&1 || true)
[ -z "$warn" ] || { echo "FAIL: groff warnings: $warn"; exit 1; }
text=$(groff -k -man -Tutf8 -P-c "$page" 2>/dev/null | sed 's/.\x08//g')
n=0
for c in $("$tb" --help | awk '/^commands:/{on=1; next} on && /^$/{exit} on && NF {print $1}'); do
  printf '%s\n' "$text" | grep -q "tailbone $c" || { echo "FAIL: no section for $c"; exit 1; }
  # the first option line of the command's help appears in the page
  opt=$("$tb" "$c" --help | grep -m1 -E '^  -' | sed 's/^ *//; s/ .*//')
  [ -z "$opt" ] || printf '%s\n' "$text" | grep -q -- "$opt" || { echo "FAIL: $c's $opt missing"; exit 1; }
  n=$((n + 1))
done
[ "$n" -ge 7 ] || { echo "FAIL: only $n commands"; exit 1; }
echo "man_page: $n commands, no groff warning"
