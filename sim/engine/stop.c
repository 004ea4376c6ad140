/* stop.c: SIGINT and SIGTERM recorded for a clean stop (stop.h). */
#include "stop.h"

#include <signal.h>
#include <string.h>

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
    stop_signal = sig;
}

void colo_stop_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

int colo_stop_requested(void)
{
    return stop_signal;
}

int colo_stop_status(void)
{
    return 128 + stop_signal;
}

const char *colo_stop_name(void)
{
    return stop_signal == SIGINT ? "SIGINT" : stop_signal == SIGTERM ? "SIGTERM" : "a signal";
}
