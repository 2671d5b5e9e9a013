// CoreFoundation's `CFAbsoluteTime`, which the example's BlinkyManager names in a delegate method
// and which Foundation on Linux does not export: the app module sees BLECBM's (the same type,
// seconds as a Double). Apple platforms have CoreFoundation's own.
#if !canImport(Darwin)
    import BLECBM

    typealias CFAbsoluteTime = BLECBM.CFAbsoluteTime
#endif
