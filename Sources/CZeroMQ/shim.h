#ifndef LIFELINE_CZEROMQ_SHIM_H
#define LIFELINE_CZEROMQ_SHIM_H
#include <zmq.h>
#include <errno.h>
#include <sys/epoll.h>
#endif
