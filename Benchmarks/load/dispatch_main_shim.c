// INSTRUCTIONS=1 of Benchmarks/load/run preloads this into the Swift servers
// it runs under valgrind.
//
// A Swift program with an async main ends its main thread in dispatch_main().
// On Linux that registers a thread-specific destructor and calls
// pthread_exit(), so the main thread ends its life parked in sigsuspend(),
// and valgrind (3.24 to 3.27 at least) dies there with an internal SIGSEGV,
// even as --tool=none. This dispatch_main() instead serves the main queue on
// the main thread the way CoreFoundation's run loop does: wait until the
// queue's handle is readable, then drain it. It never returns, like the one
// it replaces.
#include <errno.h>
#include <poll.h>

extern int _dispatch_get_main_queue_handle_4CF(void);
extern void _dispatch_main_queue_callback_4CF(void *message);

void dispatch_main(void) {
    struct pollfd handle = {.fd = _dispatch_get_main_queue_handle_4CF(), .events = POLLIN};
    for (;;) {
        if (poll(&handle, 1, -1) < 0 && errno != EINTR) continue;
        _dispatch_main_queue_callback_4CF(0);
    }
}
