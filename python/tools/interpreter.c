/* The target's CPython as a program, for a cross build: Debian ships the target's libpython
 * (multiarch) but not its python3, which would replace the build machine's. This is what
 * python3's own main() does; under the emulator it runs the wheel's test. */
#include <Python.h>

int main(int argc, char **argv) { return Py_BytesMain(argc, argv); }
