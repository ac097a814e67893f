/* Loaded by the DynamicLibrary tests: a versioned symbol, its older name, and a plain one. */
int mb_answer_v2(void) {
  return 42;
}
int mb_answer(void) {
  return 41;
}
int mb_plain(void) {
  return 7;
}
