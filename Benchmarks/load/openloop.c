/*
 * Open-loop load for the token endpoint: requests leave at a constant rate,
 * whether or not earlier ones have been answered, and each one's latency is
 * measured from the moment it was due to leave (so a stalled server shows in
 * the tail instead of slowing the generator down: no coordinated omission).
 * wrk, a closed loop, measures queueing at a fixed concurrency instead.
 *
 *   openloop PORT APP_ID RATE SECONDS CONNECTIONS [CREDENTIALS_JSON]
 *
 * Keeps CONNECTIONS kept-alive HTTP/1.1 connections to 127.0.0.1:PORT; a
 * request due while all are busy waits for the first one free (its wait
 * counts). Prints one JSON line: the rate asked and achieved, answers,
 * non-2xx answers, connection errors, and p50/p99/p99.9/max latency in ms.
 * Built by Benchmarks/load/run with the C compiler beside swift.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

enum { BUFFER = 16384 };

struct connection {
    int fd;
    int busy;
    double due;          /* when the request in flight was due, in seconds */
    char in[BUFFER];
    size_t filled;
};

static double now_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int open_connection(int port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
    if (fd < 0 || connect(fd, (struct sockaddr *)&address, sizeof address) != 0) {
        perror("connect");
        exit(2);
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double percentile(const double *sorted, size_t count, double p) {
    if (count == 0) return 0;
    size_t index = (size_t)(p * (double)(count - 1) + 0.5);
    return sorted[index];
}

/* Length of the whole answer at the start of `in`, or 0 while it is incomplete. */
static size_t answer_length(const char *in, size_t filled, int *status) {
    const char *end = memmem(in, filled, "\r\n\r\n", 4);
    if (!end || filled < 12) return 0;
    size_t head = (size_t)(end - in) + 4;
    long body = 0;
    for (const char *line = in; line < end;) {
        const char *eol = memmem(line, (size_t)(end + 2 - line), "\r\n", 2);
        if ((size_t)(eol - line) > 15 && strncasecmp(line, "content-length:", 15) == 0) body = strtol(line + 15, NULL, 10);
        line = eol + 2;
    }
    if (filled < head + (size_t)body) return 0;
    *status = atoi(in + 9);
    return head + (size_t)body;
}

static const char *app, *credentials;
static double start;
static size_t sent, errors;

/* Sends the request that was due at `due` on `c`. */
static void send_request(struct connection *c, double due) {
    char body[1024], request[2048];
    int length = snprintf(body, sizeof body, "{\"app_id\":\"%s\",\"user_id\":\"user%zu\",\"nonce\":\"o%zu-%ld\"%s%s}", app,
                          sent % 1000, sent, (long)start, credentials ? ",\"credentials\":" : "", credentials ? credentials : "");
    int total = snprintf(request, sizeof request,
                         "POST /v1/identity_tokens HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                         "Content-Length: %d\r\n\r\n%s",
                         length, body);
    if (write(c->fd, request, (size_t)total) != total) errors++;
    c->busy = 1;
    c->due = due;
    sent++;
}

int main(int argc, char **argv) {
    if (argc < 6) {
        fprintf(stderr, "usage: openloop PORT APP_ID RATE SECONDS CONNECTIONS [CREDENTIALS_JSON]\n");
        return 64;
    }
    int port = atoi(argv[1]);
    app = argv[2];
    double rate = atof(argv[3]), seconds = atof(argv[4]);
    int count = atoi(argv[5]);
    credentials = argc > 6 ? argv[6] : NULL;

    size_t planned = (size_t)(rate * seconds);
    double *latencies = malloc(sizeof(double) * (planned + 1));
    double *waiting = malloc(sizeof(double) * (planned + 1)); /* due times of requests with no free connection */
    size_t waiting_head = 0, waiting_tail = 0, answered = 0, non2xx = 0;

    struct connection *connections = calloc((size_t)count, sizeof *connections);
    int poll = epoll_create1(0);
    for (int i = 0; i < count; i++) {
        connections[i].fd = open_connection(port);
        struct epoll_event event = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
        epoll_ctl(poll, EPOLL_CTL_ADD, connections[i].fd, &event);
    }
    int timer = timerfd_create(CLOCK_MONOTONIC, 0);
    struct epoll_event timer_event = {.events = EPOLLIN, .data.u32 = UINT32_MAX};
    epoll_ctl(poll, EPOLL_CTL_ADD, timer, &timer_event);

    start = now_seconds();
    size_t next = 0; /* index of the next request to become due */
    while (answered + errors < planned) {
        double now = now_seconds();
        while (next < planned && start + (double)next / rate <= now) {
            waiting[waiting_tail++] = start + (double)next / rate;
            next++;
        }
        for (int i = 0; i < count && waiting_head < waiting_tail; i++) {
            if (!connections[i].busy) {
                send_request(&connections[i], waiting[waiting_head]);
                waiting_head++;
            }
        }
        if (next < planned) {
            double due = start + (double)next / rate;
            struct itimerspec when = {.it_value = {.tv_sec = (time_t)due, .tv_nsec = (long)((due - (double)(time_t)due) * 1e9)}};
            if (when.it_value.tv_sec == 0 && when.it_value.tv_nsec == 0) when.it_value.tv_nsec = 1;
            timerfd_settime(timer, TFD_TIMER_ABSTIME, &when, NULL);
        }
        struct epoll_event events[64];
        int ready = epoll_wait(poll, events, 64, 1000);
        for (int e = 0; e < ready; e++) {
            if (events[e].data.u32 == UINT32_MAX) {
                uint64_t expirations;
                (void)!read(timer, &expirations, sizeof expirations);
                continue;
            }
            struct connection *c = &connections[events[e].data.u32];
            ssize_t got = read(c->fd, c->in + c->filled, BUFFER - c->filled);
            if (got <= 0) {
                /* Closed or failed: the request in flight is lost; connect again. */
                epoll_ctl(poll, EPOLL_CTL_DEL, c->fd, NULL);
                close(c->fd);
                if (c->busy) errors++;
                c->fd = open_connection(port);
                c->busy = 0;
                c->filled = 0;
                struct epoll_event event = {.events = EPOLLIN, .data.u32 = events[e].data.u32};
                epoll_ctl(poll, EPOLL_CTL_ADD, c->fd, &event);
                continue;
            }
            c->filled += (size_t)got;
            int status = 0;
            size_t length = answer_length(c->in, c->filled, &status);
            if (length == 0) continue;
            latencies[answered++] = now_seconds() - c->due;
            if (status < 200 || status > 299) non2xx++;
            memmove(c->in, c->in + length, c->filled - length);
            c->filled -= length;
            c->busy = 0;
        }
    }
    double elapsed = now_seconds() - start;
    qsort(latencies, answered, sizeof(double), compare);
    printf("{\"rate_asked\": %.0f, \"rate_achieved\": %.1f, \"answers\": %zu, \"non_2xx\": %zu, \"errors\": %zu, "
           "\"p50_ms\": %.2f, \"p99_ms\": %.2f, \"p999_ms\": %.2f, \"max_ms\": %.2f}\n",
           rate, (double)answered / elapsed, answered, non2xx, errors, 1000 * percentile(latencies, answered, 0.5),
           1000 * percentile(latencies, answered, 0.99), 1000 * percentile(latencies, answered, 0.999),
           answered ? 1000 * latencies[answered - 1] : 0.0);
    return 0;
}
