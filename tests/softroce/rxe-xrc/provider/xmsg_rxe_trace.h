/* xmsg_rxe_trace.h: what libxmsg_rxe exports besides its provider registration, so that a test
 * can prove which provider function libibverbs actually called. Each op the provider installs
 * in verbs_context_ops is a function named "xrxe_<op>" that records its own name on entry. */
#ifndef XMSG_RXE_TRACE_H
#define XMSG_RXE_TRACE_H

/* Name of the provider function entered last on the calling thread ("xrxe_poll_cq", ...),
 * or NULL if none since the last clear. */
const char *xmsg_rxe_last_op(void);
void xmsg_rxe_clear_last_op(void);

/* NULL-terminated names of the verbs_context_ops members the provider sets ("poll_cq", ...),
 * generated from the same list that fills the op table. */
const char *const *xmsg_rxe_ops_set(void);

#endif
