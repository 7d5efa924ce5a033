/* xmsg_rxe.h: the provider's own objects and the rxe shared-ring protocol. */
#ifndef XMSG_RXE_H
#define XMSG_RXE_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>

#include "provider_abi.h"
#include "xmsg_rxe_trace.h"

#define XRXE_EXPORT __attribute__((visibility("default")))

/* Every op records its own function name, per thread, for xmsg_rxe_last_op(). */
extern _Thread_local const char *xrxe_last_op_name;
#define TRACE_OP() (xrxe_last_op_name = __func__)

/* Set by XMSG_RXE_DEBUG=1: say which device the provider bound and why things fail. */
extern int xrxe_debug;
void xrxe_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#define XRXE_DEBUG(...) do { if (xrxe_debug) xrxe_log(__VA_ARGS__); } while (0)

/* One rxe queue (CQ, SQ, RQ or SRQ) mapped from the kernel. The kernel owns one index and we
 * own the other: we read theirs with acquire (their writes to the slots come before it) and
 * publish ours with release (our writes to the slots, or our reads of them, come before it). */
struct xrxe_ring {
	struct rxe_queue_buf *buf; /* NULL when the kernel gave no queue (mminfo.size == 0) */
	size_t map_size;
	pthread_spinlock_t lock;   /* serialises the side of the ring that user space owns */
};

int xrxe_ring_map(struct xrxe_ring *ring, int cmd_fd, const struct mminfo *mi);
void xrxe_ring_unmap(struct xrxe_ring *ring);

static inline uint32_t ring_next(const struct rxe_queue_buf *q, uint32_t index)
{
	return (index + 1) & q->index_mask;
}
static inline void *ring_slot(struct rxe_queue_buf *q, uint32_t index)
{
	return q->data + ((size_t)(index & q->index_mask) << q->log2_elem_size);
}
static inline size_t ring_elem_size(const struct rxe_queue_buf *q)
{
	return (size_t)1 << q->log2_elem_size;
}
/* Producer side (SQ, RQ, SRQ): our index, the kernel's consumer index. */
static inline uint32_t ring_own_producer(struct rxe_queue_buf *q)
{
	return __atomic_load_n(&q->producer_index, __ATOMIC_RELAXED);
}
static inline bool ring_full_at(struct rxe_queue_buf *q, uint32_t producer)
{
	return ring_next(q, producer) == __atomic_load_n(&q->consumer_index, __ATOMIC_ACQUIRE);
}
static inline void ring_publish_producer(struct rxe_queue_buf *q, uint32_t producer)
{
	__atomic_store_n(&q->producer_index, producer, __ATOMIC_RELEASE);
}
/* Consumer side (CQ): our index, the kernel's producer index. */
static inline uint32_t ring_own_consumer(struct rxe_queue_buf *q)
{
	return __atomic_load_n(&q->consumer_index, __ATOMIC_RELAXED);
}
static inline bool ring_empty_at(struct rxe_queue_buf *q, uint32_t consumer)
{
	return consumer == __atomic_load_n(&q->producer_index, __ATOMIC_ACQUIRE);
}
static inline void ring_publish_consumer(struct rxe_queue_buf *q, uint32_t consumer)
{
	__atomic_store_n(&q->consumer_index, consumer, __ATOMIC_RELEASE);
}

struct xrxe_context {
	struct verbs_context vctx; /* first: libibverbs allocates us through it */
};

struct xrxe_cq {
	struct verbs_cq vcq;
	struct xrxe_ring ring;
};

struct xrxe_srq {
	struct verbs_srq vsrq;
	struct xrxe_ring ring;
	uint32_t max_sge;
	uint32_t srq_num;
};

struct xrxe_qp {
	struct verbs_qp vqp;
	struct xrxe_ring sq; /* none for XRC TGT */
	struct xrxe_ring rq; /* none with an SRQ, for XRC INI and XRC TGT */
	uint32_t max_send_sge;
	uint32_t max_inline;
	uint32_t max_recv_sge;
	/* ibv_qp_ex batch between wr_start and wr_complete/wr_abort (under sq.lock) */
	uint32_t batch_producer;         /* next free slot; published by wr_complete */
	struct rxe_send_wqe *batch_last; /* WQE the setters apply to */
	int batch_err;
};

static inline struct xrxe_cq *to_xcq(struct ibv_cq *cq) { return (struct xrxe_cq *)cq; }
static inline struct xrxe_srq *to_xsrq(struct ibv_srq *srq) { return (struct xrxe_srq *)srq; }
static inline struct xrxe_qp *to_xqp(struct ibv_qp *qp) { return (struct xrxe_qp *)qp; }
static inline struct xrxe_qp *ex_to_xqp(struct ibv_qp_ex *qpx) { return (struct xrxe_qp *)qpx; }

/* A receive WQE into an RQ or SRQ ring; caller holds ring->lock. */
int xrxe_post_one_recv(struct xrxe_ring *ring, uint32_t max_sge, const struct ibv_recv_wr *wr);

/* Ops implemented in qp.c, installed by provider.c. */
struct ibv_qp *xrxe_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
struct ibv_qp *xrxe_create_qp_ex(struct ibv_context *context, struct ibv_qp_init_attr_ex *attr);
struct ibv_qp *xrxe_open_qp(struct ibv_context *context, struct ibv_qp_open_attr *attr);
int xrxe_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
		  struct ibv_qp_init_attr *init_attr);
int xrxe_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask);
int xrxe_destroy_qp(struct ibv_qp *qp);
int xrxe_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);
int xrxe_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);

#endif
