/* provider.c: libxmsg_rxe, a libibverbs provider for soft-RoCE (rdma_rxe) that adds XRC.
 *
 * This file: registration and device matching, the context, and the device, PD, MR, CQ, SRQ
 * and XRCD ops. Queue pairs and posting are in qp.c. The kernel interface is rxe's
 * (rdma/rdma_user_rxe.h): each CQ, SQ, RQ and SRQ is a ring mmap'ed from the command fd, the
 * kernel fills CQs and drains SQs, user space fills SQs/RQs/SRQs and drains CQs. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "xmsg_rxe.h"

_Thread_local const char *xrxe_last_op_name;
int xrxe_debug;

void xrxe_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "xmsg_rxe[%d]: ", (int)getpid());
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

int xrxe_ring_map(struct xrxe_ring *ring, int cmd_fd, const struct mminfo *mi)
{
	void *buf;

	ring->buf = NULL;
	ring->map_size = 0;
	pthread_spin_init(&ring->lock, PTHREAD_PROCESS_PRIVATE);
	if (mi->size == 0)
		return 0; /* the kernel made no queue of this kind */
	buf = mmap(NULL, mi->size, PROT_READ | PROT_WRITE, MAP_SHARED, cmd_fd, (off_t)mi->offset);
	if (buf == MAP_FAILED) {
		int err = errno;

		pthread_spin_destroy(&ring->lock);
		return err;
	}
	ring->buf = buf;
	ring->map_size = mi->size;
	return 0;
}

void xrxe_ring_unmap(struct xrxe_ring *ring)
{
	if (ring->buf)
		munmap(ring->buf, ring->map_size);
	ring->buf = NULL;
	ring->map_size = 0;
	pthread_spin_destroy(&ring->lock);
}

/* ---- device ------------------------------------------------------------------------------- */

static int xrxe_query_device_ex(struct ibv_context *context, const struct ibv_query_device_ex_input *input,
				struct ibv_device_attr_ex *attr, size_t attr_size)
{
	TRACE_OP();
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);
	int err = ibv_cmd_query_device_any(context, input, attr, attr_size, &resp, &resp_size);

	if (err)
		return err;
	/* rxe packs its firmware version as 16-bit major.minor.sub in the low 48 bits */
	snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver), "%u.%u.%u",
		 (unsigned)(resp.base.fw_ver >> 32) & 0xffff, (unsigned)(resp.base.fw_ver >> 16) & 0xffff,
		 (unsigned)resp.base.fw_ver & 0xffff);
	return 0;
}

static int xrxe_query_port(struct ibv_context *context, uint8_t port_num, struct ibv_port_attr *port_attr)
{
	TRACE_OP();
	struct ibv_query_port cmd = {0};

	return ibv_cmd_query_port(context, port_num, port_attr, &cmd, sizeof(cmd));
}

/* ---- protection domains and memory regions ----------------------------------------------- */

static struct ibv_pd *xrxe_alloc_pd(struct ibv_context *context)
{
	TRACE_OP();
	struct ibv_alloc_pd cmd = {0};
	struct ib_uverbs_alloc_pd_resp resp = {0};
	struct ibv_pd *pd = calloc(1, sizeof(*pd));
	int err;

	if (!pd)
		return NULL;
	err = ibv_cmd_alloc_pd(context, pd, &cmd, sizeof(cmd), &resp, sizeof(resp));
	if (err) {
		free(pd);
		errno = err;
		return NULL;
	}
	return pd;
}

static int xrxe_dealloc_pd(struct ibv_pd *pd)
{
	TRACE_OP();
	int err = ibv_cmd_dealloc_pd(pd);

	if (!err)
		free(pd);
	return err;
}

static struct ibv_mr *xrxe_reg_mr(struct ibv_pd *pd, void *addr, size_t length, uint64_t hca_va, int access)
{
	TRACE_OP();
	struct ibv_reg_mr cmd = {0};
	struct ib_uverbs_reg_mr_resp resp = {0};
	struct verbs_mr *vmr = calloc(1, sizeof(*vmr));
	int err;

	if (!vmr)
		return NULL;
	err = ibv_cmd_reg_mr(pd, addr, length, hca_va, access, vmr, &cmd, sizeof(cmd), &resp, sizeof(resp));
	if (err) {
		free(vmr);
		errno = err;
		return NULL;
	}
	return &vmr->ibv_mr;
}

static int xrxe_dereg_mr(struct verbs_mr *vmr)
{
	TRACE_OP();
	int err = ibv_cmd_dereg_mr(vmr);

	if (!err)
		free(vmr);
	return err;
}

/* ---- completion queues ------------------------------------------------------------------- */

/* The kernel's completion flags that rxe sets in user CQEs; all but the invalidate bit have the
 * same value in ibv_wc (ib_verbs.h's IB_WC_WITH_INVALIDATE is IBV_WC_IP_CSUM_OK's bit). */
enum { KERNEL_WC_GRH = 1 << 0, KERNEL_WC_WITH_IMM = 1 << 1, KERNEL_WC_WITH_INVALIDATE = 1 << 2 };

/* A CQ slot, as the kernel wrote it, into what the caller reads. */
static void wc_from_kernel(struct ibv_wc *wc, const struct ib_uverbs_wc *kwc)
{
	wc->wr_id = kwc->wr_id;
	wc->status = (enum ibv_wc_status)kwc->status;
	wc->opcode = (enum ibv_wc_opcode)kwc->opcode;
	wc->vendor_err = kwc->vendor_err;
	wc->byte_len = kwc->byte_len;
	wc->imm_data = kwc->ex.imm_data;
	wc->qp_num = kwc->qp_num;
	wc->src_qp = kwc->src_qp;
	wc->wc_flags = (kwc->wc_flags & (KERNEL_WC_GRH | KERNEL_WC_WITH_IMM)) |
		       ((kwc->wc_flags & KERNEL_WC_WITH_INVALIDATE) ? IBV_WC_WITH_INV : 0);
	wc->pkey_index = kwc->pkey_index;
	wc->slid = kwc->slid;
	wc->sl = kwc->sl;
	wc->dlid_path_bits = kwc->dlid_path_bits;
}

struct xrxe_create_cq_resp {
	struct ib_uverbs_create_cq_resp core;
	struct rxe_create_cq_resp drv;
};
_Static_assert(offsetof(struct xrxe_create_cq_resp, drv) == sizeof(struct ib_uverbs_create_cq_resp), "udata");

/* Maps the CQ ring once the kernel made the CQ; on failure destroys it again. */
static int cq_map(struct xrxe_cq *cq, struct ibv_context *context, const struct mminfo *mi)
{
	int err = mi->size ? xrxe_ring_map(&cq->ring, context->cmd_fd, mi) : EPROTO;

	if (!err && ring_elem_size(cq->ring.buf) < sizeof(struct ib_uverbs_wc)) {
		xrxe_ring_unmap(&cq->ring);
		err = EPROTO;
	}
	if (err) {
		XRXE_DEBUG("CQ ring not usable (%s)", strerror(err));
		ibv_cmd_destroy_cq(&cq->vcq.cq);
	}
	return err;
}

static struct ibv_cq *xrxe_create_cq(struct ibv_context *context, int cqe, struct ibv_comp_channel *channel,
				     int comp_vector)
{
	TRACE_OP();
	struct ibv_create_cq cmd = {0};
	struct xrxe_create_cq_resp resp = {0};
	struct xrxe_cq *cq = calloc(1, sizeof(*cq));
	int err;

	if (!cq)
		return NULL;
	err = ibv_cmd_create_cq(context, cqe, channel, comp_vector, &cq->vcq.cq, &cmd, sizeof(cmd), &resp.core,
				sizeof(resp));
	if (!err)
		err = cq_map(cq, context, &resp.drv.mi);
	if (err) {
		free(cq);
		errno = err;
		return NULL;
	}
	return &cq->vcq.cq;
}

static int xrxe_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
	TRACE_OP();
	struct xrxe_cq *cq = to_xcq(ibcq);
	struct rxe_queue_buf *q = cq->ring.buf;
	uint32_t consumer;
	int polled = 0;

	pthread_spin_lock(&cq->ring.lock);
	consumer = ring_own_consumer(q);
	while (polled < num_entries && !ring_empty_at(q, consumer)) {
		wc_from_kernel(&wc[polled++], ring_slot(q, consumer));
		consumer = ring_next(q, consumer);
		ring_publish_consumer(q, consumer); /* free the slot as soon as it is read */
	}
	pthread_spin_unlock(&cq->ring.lock);
	return polled;
}

static int xrxe_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	TRACE_OP();
	return ibv_cmd_req_notify_cq(cq, solicited_only);
}

static int xrxe_destroy_cq(struct ibv_cq *ibcq)
{
	TRACE_OP();
	struct xrxe_cq *cq = to_xcq(ibcq);
	int err = ibv_cmd_destroy_cq(ibcq);

	if (err)
		return err;
	xrxe_ring_unmap(&cq->ring);
	free(cq);
	return 0;
}

/* ---- shared receive queues (basic and XRC) ---------------------------------------------- */

struct xrxe_create_srq_resp {
	struct ib_uverbs_create_srq_resp core;
	struct rxe_create_srq_resp drv;
};
_Static_assert(offsetof(struct xrxe_create_srq_resp, drv) == sizeof(struct ib_uverbs_create_srq_resp), "udata");

static uint32_t recv_ring_max_sge(const struct rxe_queue_buf *q)
{
	return (uint32_t)((ring_elem_size(q) - offsetof(struct rxe_recv_wqe, dma.sge)) / sizeof(struct rxe_sge));
}

/* Maps the SRQ ring once the kernel made the SRQ; on failure destroys it again. */
static int srq_map(struct xrxe_srq *srq, struct ibv_context *context, const struct rxe_create_srq_resp *drv,
		   uint32_t max_sge)
{
	int err = drv->mi.size ? xrxe_ring_map(&srq->ring, context->cmd_fd, &drv->mi) : EPROTO;

	if (err) {
		XRXE_DEBUG("SRQ ring not usable (%s)", strerror(err));
		ibv_cmd_destroy_srq(&srq->vsrq.srq);
		return err;
	}
	srq->max_sge = max_sge < recv_ring_max_sge(srq->ring.buf) ? max_sge : recv_ring_max_sge(srq->ring.buf);
	return 0;
}

static struct ibv_srq *xrxe_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	TRACE_OP();
	struct ibv_create_srq cmd = {0};
	struct xrxe_create_srq_resp resp = {0};
	struct xrxe_srq *srq = calloc(1, sizeof(*srq));
	int err;

	if (!srq)
		return NULL;
	err = ibv_cmd_create_srq(pd, &srq->vsrq.srq, attr, &cmd, sizeof(cmd), &resp.core, sizeof(resp));
	if (!err)
		err = srq_map(srq, pd->context, &resp.drv, attr->attr.max_sge);
	if (err) {
		free(srq);
		errno = err;
		return NULL;
	}
	srq->srq_num = resp.drv.srq_num;
	return &srq->vsrq.srq;
}

static struct ibv_srq *xrxe_create_srq_ex(struct ibv_context *context, struct ibv_srq_init_attr_ex *attr)
{
	TRACE_OP();
	const uint32_t supported = IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_CQ |
				   IBV_SRQ_INIT_ATTR_XRCD;
	enum ibv_srq_type type = (attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) ? attr->srq_type : IBV_SRQT_BASIC;
	struct ibv_create_xsrq cmd = {0};
	struct xrxe_create_srq_resp resp = {0};
	struct xrxe_srq *srq;
	int err;

	if ((attr->comp_mask & ~supported) || (type != IBV_SRQT_BASIC && type != IBV_SRQT_XRC)) {
		errno = EOPNOTSUPP; /* no tag matching */
		return NULL;
	}
	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return NULL;
	err = ibv_cmd_create_srq_ex(context, &srq->vsrq, attr, &cmd, sizeof(cmd), &resp.core, sizeof(resp));
	if (!err)
		err = srq_map(srq, context, &resp.drv, attr->attr.max_sge);
	if (err) {
		free(srq);
		errno = err;
		return NULL;
	}
	/* For XRC the core already took the number from the kernel (the srq_num attribute, or the
	 * write response's srqn); rxe's driver response repeats it, and is all a basic SRQ has. */
	srq->srq_num = type == IBV_SRQT_XRC && srq->vsrq.srq_num ? srq->vsrq.srq_num : resp.drv.srq_num;
	if (type == IBV_SRQT_XRC && resp.drv.srq_num != srq->srq_num)
		XRXE_DEBUG("XRC SRQ: core srq_num %u but rxe_create_srq_resp.srq_num %u; using the core's",
			   srq->srq_num, resp.drv.srq_num);
	/* ibv_create_srq() fills these after a basic create; ibv_create_srq_ex() leaves it to us */
	srq->vsrq.srq.srq_context = attr->srq_context;
	srq->vsrq.srq.pd = attr->pd;
	srq->vsrq.srq.events_completed = 0;
	return &srq->vsrq.srq;
}

static int xrxe_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr, int attr_mask)
{
	TRACE_OP();
	struct xrxe_srq *srq = to_xsrq(ibsrq);
	/* rxe insists on its driver command: where to write the new ring's mminfo on a resize */
	struct {
		struct ibv_modify_srq ibv_cmd;
		struct rxe_modify_srq_cmd drv;
	} cmd = {0};
	struct mminfo resized = {0};
	int err;

	cmd.drv.mmap_info_addr = (uintptr_t)&resized;
	if (!(attr_mask & IBV_SRQ_MAX_WR))
		return ibv_cmd_modify_srq(ibsrq, attr, attr_mask, &cmd.ibv_cmd, sizeof(cmd));

	pthread_spin_lock(&srq->ring.lock); /* no posting while the ring is replaced */
	err = ibv_cmd_modify_srq(ibsrq, attr, attr_mask, &cmd.ibv_cmd, sizeof(cmd));
	if (!err && resized.size) {
		void *buf = mmap(NULL, resized.size, PROT_READ | PROT_WRITE, MAP_SHARED,
				 ibsrq->context->cmd_fd, (off_t)resized.offset);

		if (buf == MAP_FAILED) {
			err = errno;
		} else {
			munmap(srq->ring.buf, srq->ring.map_size);
			srq->ring.buf = buf;
			srq->ring.map_size = resized.size;
		}
	}
	pthread_spin_unlock(&srq->ring.lock);
	return err;
}

static int xrxe_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	TRACE_OP();
	struct ibv_query_srq cmd = {0};

	return ibv_cmd_query_srq(srq, attr, &cmd, sizeof(cmd));
}

static int xrxe_destroy_srq(struct ibv_srq *ibsrq)
{
	TRACE_OP();
	struct xrxe_srq *srq = to_xsrq(ibsrq);
	int err = ibv_cmd_destroy_srq(ibsrq);

	if (err)
		return err;
	xrxe_ring_unmap(&srq->ring);
	free(srq);
	return 0;
}

int xrxe_post_one_recv(struct xrxe_ring *ring, uint32_t max_sge, const struct ibv_recv_wr *wr)
{
	struct rxe_queue_buf *q = ring->buf;
	uint32_t producer = ring_own_producer(q);
	struct rxe_recv_wqe *wqe;
	uint32_t total = 0;

	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > max_sge)
		return EINVAL;
	if (ring_full_at(q, producer))
		return ENOMEM;
	wqe = ring_slot(q, producer);
	wqe->wr_id = wr->wr_id;
	wqe->reserved = 0;
	wqe->padding = 0;
	for (int i = 0; i < wr->num_sge; i++) {
		wqe->dma.sge[i].addr = wr->sg_list[i].addr;
		wqe->dma.sge[i].length = wr->sg_list[i].length;
		wqe->dma.sge[i].lkey = wr->sg_list[i].lkey;
		total += wr->sg_list[i].length;
	}
	wqe->dma.length = total;
	wqe->dma.resid = total;
	wqe->dma.cur_sge = 0;
	wqe->dma.num_sge = (uint32_t)wr->num_sge;
	wqe->dma.sge_offset = 0;
	wqe->dma.reserved = 0;
	ring_publish_producer(q, ring_next(q, producer));
	return 0;
}

static int xrxe_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	TRACE_OP();
	struct xrxe_srq *srq = to_xsrq(ibsrq);
	int err = 0;

	pthread_spin_lock(&srq->ring.lock);
	for (; wr; wr = wr->next) {
		err = xrxe_post_one_recv(&srq->ring, srq->max_sge, wr);
		if (err) {
			*bad_wr = wr;
			break;
		}
	}
	pthread_spin_unlock(&srq->ring.lock);
	return err;
}

static int xrxe_get_srq_num(struct ibv_srq *srq, uint32_t *srq_num)
{
	TRACE_OP();
	*srq_num = to_xsrq(srq)->srq_num;
	return 0;
}

/* ---- XRC domains -------------------------------------------------------------------------- */

static struct ibv_xrcd *xrxe_open_xrcd(struct ibv_context *context, struct ibv_xrcd_init_attr *attr)
{
	TRACE_OP();
	struct ibv_open_xrcd cmd = {0};
	struct ib_uverbs_open_xrcd_resp resp = {0};
	struct verbs_xrcd *xrcd = calloc(1, sizeof(*xrcd));
	int err;

	if (!xrcd)
		return NULL;
	err = ibv_cmd_open_xrcd(context, xrcd, sizeof(*xrcd), attr, &cmd, sizeof(cmd), &resp, sizeof(resp));
	if (err) {
		free(xrcd);
		errno = err;
		return NULL;
	}
	return &xrcd->xrcd;
}

static int xrxe_close_xrcd(struct ibv_xrcd *ibxrcd)
{
	TRACE_OP();
	struct verbs_xrcd *xrcd = (struct verbs_xrcd *)ibxrcd;
	int err = ibv_cmd_close_xrcd(xrcd);

	if (!err)
		free(xrcd);
	return err;
}

/* ---- context, op table, registration ---------------------------------------------------- */

static void xrxe_free_context(struct ibv_context *ibctx)
{
	TRACE_OP();
	/* struct ibv_context is the last member of struct verbs_context, not the first */
	struct xrxe_context *ctx = (struct xrxe_context *)((char *)ibctx - offsetof(struct verbs_context, context));

	verbs_uninit_context(&ctx->vctx);
	free(ctx);
}

/* The one list of ops this provider installs: op X is the function xrxe_X, which records
 * "xrxe_X" when entered. The table and xmsg_rxe_ops_set() are both generated from it. */
#define XRXE_OPS(X)                                                                              \
	X(query_device_ex) X(query_port) X(alloc_pd) X(dealloc_pd) X(reg_mr) X(dereg_mr)         \
	X(create_cq) X(poll_cq) X(req_notify_cq) X(destroy_cq)                  \
	X(create_srq) X(create_srq_ex) X(modify_srq) X(query_srq) X(destroy_srq)                 \
	X(post_srq_recv) X(get_srq_num) X(open_xrcd) X(close_xrcd)                               \
	X(create_qp) X(create_qp_ex) X(open_qp) X(query_qp) X(modify_qp) X(destroy_qp)           \
	X(post_send) X(post_recv) X(free_context)

#define XRXE_TABLE_ENTRY(op) .op = xrxe_##op,
#define XRXE_NAME_ENTRY(op) #op,
static const struct verbs_context_ops xrxe_context_ops = { XRXE_OPS(XRXE_TABLE_ENTRY) };
static const char *const xrxe_op_names[] = { XRXE_OPS(XRXE_NAME_ENTRY) NULL };

XRXE_EXPORT const char *xmsg_rxe_last_op(void) { return xrxe_last_op_name; }
XRXE_EXPORT void xmsg_rxe_clear_last_op(void) { xrxe_last_op_name = NULL; }
XRXE_EXPORT const char *const *xmsg_rxe_ops_set(void) { return xrxe_op_names; }

static struct verbs_context *xrxe_alloc_context(struct ibv_device *ibdev, int cmd_fd, void *private_data)
{
	TRACE_OP();
	struct ibv_get_context cmd = {0};
	struct ib_uverbs_get_context_resp resp = {0};
	struct xrxe_context *ctx;

	(void)private_data;
	_Static_assert(offsetof(struct xrxe_context, vctx) == 0, "the core finds vctx at offset 0");
	ctx = _verbs_init_and_alloc_context(ibdev, cmd_fd, sizeof(*ctx), NULL, RDMA_DRIVER_RXE);
	if (!ctx)
		return NULL;
	if (ibv_cmd_get_context(&ctx->vctx, &cmd, sizeof(cmd), &resp, sizeof(resp))) {
		verbs_uninit_context(&ctx->vctx);
		free(ctx);
		return NULL;
	}
	verbs_set_ops(&ctx->vctx, &xrxe_context_ops);
	XRXE_DEBUG("bound %s (libxmsg_rxe, XRC-capable rxe provider)", ibdev->name);
	return &ctx->vctx;
}

static struct verbs_device *xrxe_alloc_device(struct verbs_sysfs_dev *sysfs_dev)
{
	(void)sysfs_dev;
	return calloc(1, sizeof(struct verbs_device));
}

static void xrxe_uninit_device(struct verbs_device *device)
{
	free(device);
}

static const struct verbs_match_ent xrxe_match_table[] = {
	{ .u.driver_id = RDMA_DRIVER_RXE, .kind = VERBS_MATCH_DRIVER_ID },
	{ .u.modalias = "rdma_device:*Nrxe*", .kind = VERBS_MATCH_MODALIAS }, /* name "rxe*", old kernels */
	{ .kind = VERBS_MATCH_SENTINEL },
};

_Static_assert(sizeof(void *) == 8, "rxe uverbs ABI 1 and 2 only coincide on 64-bit");
static const struct verbs_device_ops xrxe_device_ops = {
	.name = "xmsg_rxe",
	.match_min_abi_version = 1, /* RXE_UVERBS_ABI_VERSION is 2; 1 has the same layout on LP64 */
	.match_max_abi_version = 2,
	.match_table = xrxe_match_table,
	.alloc_context = xrxe_alloc_context,
	.alloc_device = xrxe_alloc_device,
	.uninit_device = xrxe_uninit_device,
};

/* libibverbs dlopens the providers named in RDMAV_DRIVERS before those of /etc/libibverbs.d,
 * and tries them in registration order: registering here puts us ahead of librxe. */
__attribute__((constructor)) static void xrxe_register(void)
{
	const char *debug = getenv("XMSG_RXE_DEBUG");

	xrxe_debug = debug && *debug && strcmp(debug, "0") != 0;
	XRXE_DEBUG("provider registered");
	verbs_register_driver_34(&xrxe_device_ops);
}
