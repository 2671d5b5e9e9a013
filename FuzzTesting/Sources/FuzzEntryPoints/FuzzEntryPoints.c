// SwiftPM links every Swift executable on Linux with `--defsym main=<Module>_main`, so that
// tests can link executables, and expects the module to define `<Module>_main`. A fuzz
// target is built with `-parse-as-library` (libFuzzer supplies the program's entry point),
// so that symbol is missing and linking fails. These definitions supply it for each target
// and hand control to libFuzzer's driver with the target's `LLVMFuzzerTestOneInput`. If
// SwiftPM stops renaming `main`, libFuzzer's own `main` is used and these go unused.
#include "FuzzEntryPoints.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int runFuzzer(int argc, char **argv) {
    return LLVMFuzzerRunDriver(&argc, &argv, LLVMFuzzerTestOneInput);
}

int FuzzReassembly_main(int argc, char **argv) { return runFuzzer(argc, argv); }
int FuzzFixtures_main(int argc, char **argv) { return runFuzzer(argc, argv); }
int FuzzUUID_main(int argc, char **argv) { return runFuzzer(argc, argv); }
int FuzzCapture_main(int argc, char **argv) { return runFuzzer(argc, argv); }
int FuzzScenarioRun_main(int argc, char **argv) { return runFuzzer(argc, argv); }
int FuzzRecording_main(int argc, char **argv) { return runFuzzer(argc, argv); }
