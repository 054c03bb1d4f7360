# Sourced by tests/blender/*.sh: honest skips (docs/testing.md).
#   tb_skip NAME WHY        exit 77 (CTest: skipped), logged in $TB_SKIP_LOG
#   tb_need_corpus NAME F…  a missing corpus file fails with TB_REQUIRE_CORPUS=1
tb_skip() {
  echo "SKIP: $2"
  if [ -n "${TB_SKIP_LOG:-}" ]; then echo "$1: test skipped, $2" >> "$TB_SKIP_LOG"; fi
  exit 77
}
tb_need_corpus() {
  local name="$1" f; shift
  for f in "$@"; do
    [ -f "$f" ] && continue
    if [ "${TB_REQUIRE_CORPUS:-}" = 1 ]; then echo "FAIL: TB_REQUIRE_CORPUS=1 but corpus file $f is missing"; exit 1; fi
    tb_skip "$name" "missing $f"
  done
}
