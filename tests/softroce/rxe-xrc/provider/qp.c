/* qp.c: queue pairs for libxmsg_rxe: RC, UC and the two XRC halves, posting through
 * ibv_post_send/ibv_post_recv and the extended (ibv_qp_ex) send API.
 *
 * XRC with rxe, as agreed with the kernel module:
 *  - INI (IBV_QPT_XRC_SEND) has a send ring and no receive ring; every send WQE names the
 *    target SRQ in rxe_send_wr.reserved, which the kernel reads as srq_num.
 *  - TGT (IBV_QPT_XRC_RECV) belongs to an XRCD and has no rings at all: its receives land in
 *    the XRC SRQ that each packet names, and complete in that SRQ's CQ. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xmsg_rxe.h"

struct xrxe_create_qp_resp {
	struct ib_uverbs_ex_create_qp_resp core;
	struct rxe_create_qp_resp drv;
};
_Static_assert(offsetof(struct xrxe_create_qp_resp, drv) == sizeof(struct ib_uverbs_ex_create_qp_resp), "udata");

enum {
	XRXE_QP_COMP_MASK = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_XRCD | IBV_QP_INIT_ATTR_CREATE_FLAGS |
			    IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
	XRXE_UC_SEND_OPS = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_WRITE |
			   IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM,
	XRXE_RC_SEND_OPS = XRXE_UC_SEND_OPS | IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
			   IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD,
};

static bool is_atomic(enum ibv_wr_opcode opcode)
{
	return opcode == IBV_WR_ATOMIC_CMP_AND_SWP || opcode == IBV_WR_ATOMIC_FETCH_AND_ADD;
}

static bool opcode_allowed(enum ibv_qp_type type, enum ibv_wr_opcode opcode)
{
	switch (opcode) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return type == IBV_QPT_RC || type == IBV_QPT_UC || type == IBV_QPT_XRC_SEND;
	case IBV_WR_RDMA_READ:
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return type == IBV_QPT_RC || type == IBV_QPT_XRC_SEND;
	case IBV_WR_SEND_WITH_INV:
		return type == IBV_QPT_RC;
	default:
		return false; /* memory windows, local invalidate, TSO, ...: not offered */
	}
}

/* Tells the kernel to look at the send ring: a POST_SEND write carrying no work requests. */
static int ring_send_doorbell(struct ibv_qp *qp)
{
	struct ibv_post_send cmd = {0};
	struct ib_uverbs_post_send_resp resp;

	cmd.hdr.command = IB_USER_VERBS_CMD_POST_SEND;
	cmd.hdr.in_words = sizeof(cmd) / 4;
	cmd.hdr.out_words = sizeof(resp) / 4;
	cmd.core_payload.response = (uintptr_t)&resp;
	cmd.core_payload.qp_handle = qp->handle;
	cmd.core_payload.wqe_size = sizeof(struct ib_uverbs_send_wr);
	if (write(qp->context->cmd_fd, &cmd, sizeof(cmd)) != (ssize_t)sizeof(cmd))
		return errno;
	return 0;
}

/* ---- the extended send API (ibv_qp_ex): builders claim a slot, setters fill the last one ---- */

static struct rxe_send_wqe *batch_new_wqe(struct ibv_qp_ex *qpx, enum ibv_wr_opcode opcode)
{
	struct xrxe_qp *qp = ex_to_xqp(qpx);
	struct rxe_queue_buf *q = qp->sq.buf;
	struct rxe_send_wqe *wqe;

	qp->batch_last = NULL;
	if (qp->batch_err)
		return NULL;
	if (ring_full_at(q, qp->batch_producer)) {
		qp->batch_err = ENOMEM;
		return NULL;
	}
	wqe = ring_slot(q, qp->batch_producer);
	memset(wqe, 0, sizeof(*wqe));
	wqe->wr.wr_id = qpx->wr_id;
	wqe->wr.opcode = opcode;
	wqe->wr.send_flags = qpx->wr_flags;
	qp->batch_producer = ring_next(q, qp->batch_producer);
	qp->batch_last = wqe;
	return wqe;
}

static void set_remote(struct rxe_send_wqe *wqe, uint32_t rkey, uint64_t remote_addr)
{
	wqe->wr.wr.rdma.remote_addr = remote_addr;
	wqe->wr.wr.rdma.rkey = rkey;
	wqe->iova = remote_addr;
}

static void wr_send(struct ibv_qp_ex *qpx)
{
	batch_new_wqe(qpx, IBV_WR_SEND);
}

static void wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm_data)
{
	struct rxe_send_wqe *wqe = batch_new_wqe(qpx, IBV_WR_SEND_WITH_IMM);

	if (wqe)
		wqe->wr.ex.imm_data = imm_data;
}

static void wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr)
{
	struct rxe_send_wqe *wqe = batch_new_wqe(qpx, IBV_WR_RDMA_WRITE);

	if (wqe)
		set_remote(wqe, rkey, remote_addr);
}

static void wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr, __be32 imm_data)
{
	struct rxe_send_wqe *wqe = batch_new_wqe(qpx, IBV_WR_RDMA_WRITE_WITH_IMM);

	if (wqe) {
		set_remote(wqe, rkey, remote_addr);
		wqe->wr.ex.imm_data = imm_data;
	}
}

static void wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr)
{
	struct rxe_send_wqe *wqe = batch_new_wqe(qpx, IBV_WR_RDMA_READ);

	if (wqe)
		set_remote(wqe, rkey, remote_addr);
}

static void set_atomic(struct ibv_qp_ex *qpx, struct rxe_send_wqe *wqe, uint32_t rkey, uint64_t remote_addr,
		       uint64_t compare_add, uint64_t swap)
{
	if (!wqe)
		return;
	if (remote_addr & 7) {
		ex_to_xqp(qpx)->batch_err = EINVAL; /* atomics need 8-byte aligned targets */
		return;
	}
	wqe->wr.wr.atomic.remote_addr = remote_addr;
	wqe->wr.wr.atomic.compare_add = compare_add;
	wqe->wr.wr.atomic.swap = swap;
	wqe->wr.wr.atomic.rkey = rkey;
	wqe->iova = remote_addr;
}

static void wr_atomic_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr, uint64_t compare,
			      uint64_t swap)
{
	set_atomic(qpx, batch_new_wqe(qpx, IBV_WR_ATOMIC_CMP_AND_SWP), rkey, remote_addr, compare, swap);
}

static void wr_atomic_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr, uint64_t add)
{
	set_atomic(qpx, batch_new_wqe(qpx, IBV_WR_ATOMIC_FETCH_AND_ADD), rkey, remote_addr, add, 0);
}

/* Setters apply to the WQE the last builder made; after an error they do nothing. */
static struct rxe_send_wqe *batch_last_wqe(struct ibv_qp_ex *qpx)
{
	struct xrxe_qp *qp = ex_to_xqp(qpx);

	if (qp->batch_err)
		return NULL;
	if (!qp->batch_last)
		qp->batch_err = EINVAL; /* a setter without a builder before it */
	return qp->batch_last;
}

static void wr_set_sge_list(struct ibv_qp_ex *qpx, size_t num_sge, const struct ibv_sge *sg_list)
{
	struct xrxe_qp *qp = ex_to_xqp(qpx);
	struct rxe_send_wqe *wqe = batch_last_wqe(qpx);
	uint32_t total = 0;

	if (!wqe)
		return;
	if (num_sge > qp->max_send_sge) {
		qp->batch_err = EINVAL;
		return;
	}
	for (size_t i = 0; i < num_sge; i++) {
		wqe->dma.sge[i].addr = sg_list[i].addr;
		wqe->dma.sge[i].length = sg_list[i].length;
		wqe->dma.sge[i].lkey = sg_list[i].lkey;
		total += sg_list[i].length;
	}
	wqe->dma.num_sge = (uint32_t)num_sge;
	wqe->dma.length = total;
	wqe->dma.resid = total;
}

static void wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey, uint64_t addr, uint32_t length)
{
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	wr_set_sge_list(qpx, 1, &sge);
}

static void wr_set_inline_data_list(struct ibv_qp_ex *qpx, size_t num_buf, const struct ibv_data_buf *buf_list)
{
	struct xrxe_qp *qp = ex_to_xqp(qpx);
	struct rxe_send_wqe *wqe = batch_last_wqe(qpx);
	size_t total = 0;

	if (!wqe)
		return;
	for (size_t i = 0; i < num_buf; i++) {
		if (total + buf_list[i].length > qp->max_inline) {
			qp->batch_err = EINVAL;
			return;
		}
		memcpy(wqe->dma.inline_data + total, buf_list[i].addr, buf_list[i].length);
		total += buf_list[i].length;
	}
	wqe->wr.send_flags |= IBV_SEND_INLINE; /* the kernel takes the payload from the WQE */
	wqe->dma.num_sge = 0;
	wqe->dma.length = (uint32_t)total;
	wqe->dma.resid = (uint32_t)total;
}

static void wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr, size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	wr_set_inline_data_list(qpx, 1, &buf);
}

static void wr_set_xrc_srqn(struct ibv_qp_ex *qpx, uint32_t remote_srqn)
{
	struct rxe_send_wqe *wqe = batch_last_wqe(qpx);

	if (wqe)
		wqe->wr.reserved = remote_srqn; /* the kernel reads it as srq_num */
}

static void wr_start(struct ibv_qp_ex *qpx)
{
	struct xrxe_qp *qp = ex_to_xqp(qpx);

	pthread_spin_lock(&qp->sq.lock);
	qp->batch_producer = ring_own_producer(qp->sq.buf);
	qp->batch_last = NULL;
	qp->batch_err = 0;
}

static int wr_complete(struct ibv_qp_ex *qpx)
{
	struct xrxe_qp *qp = ex_to_xqp(qpx);
	struct rxe_queue_buf *q = qp->sq.buf;
	bool posted = qp->batch_producer != ring_own_producer(q);
	int err = qp->batch_err;

	if (!err)
		ring_publish_producer(q, qp->batch_producer); /* on error nothing of the batch is posted */
	pthread_spin_unlock(&qp->sq.lock);
	if (err)
		return err;
	return posted ? ring_send_doorbell(&qp->vqp.qp) : 0;
}

static void wr_abort(struct ibv_qp_ex *qpx)
{
	pthread_spin_unlock(&ex_to_xqp(qpx)->sq.lock);
}

static void install_send_ops(struct xrxe_qp *qp, uint64_t flags)
{
	struct ibv_qp_ex *qpx = &qp->vqp.qp_ex;

	qpx->wr_start = wr_start;
	qpx->wr_complete = wr_complete;
	qpx->wr_abort = wr_abort;
	if (flags & IBV_QP_EX_WITH_SEND)
		qpx->wr_send = wr_send;
	if (flags & IBV_QP_EX_WITH_SEND_WITH_IMM)
		qpx->wr_send_imm = wr_send_imm;
	if (flags & IBV_QP_EX_WITH_RDMA_WRITE)
		qpx->wr_rdma_write = wr_rdma_write;
	if (flags & IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM)
		qpx->wr_rdma_write_imm = wr_rdma_write_imm;
	if (flags & IBV_QP_EX_WITH_RDMA_READ)
		qpx->wr_rdma_read = wr_rdma_read;
	if (flags & IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP)
		qpx->wr_atomic_cmp_swp = wr_atomic_cmp_swp;
	if (flags & IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)
		qpx->wr_atomic_fetch_add = wr_atomic_fetch_add;
	qpx->wr_set_sge = wr_set_sge;
	qpx->wr_set_sge_list = wr_set_sge_list;
	qpx->wr_set_inline_data = wr_set_inline_data;
	qpx->wr_set_inline_data_list = wr_set_inline_data_list;
	if (qp->vqp.qp.qp_type == IBV_QPT_XRC_SEND)
		qpx->wr_set_xrc_srqn = wr_set_xrc_srqn;
}

/* ---- creation and the other control ops ------------------------------------------------- */

static int check_qp_init_attr(const struct ibv_qp_init_attr_ex *attr)
{
	uint64_t send_ops = (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) ? attr->send_ops_flags : 0;

	if (attr->comp_mask & ~(uint32_t)XRXE_QP_COMP_MASK)
		return EOPNOTSUPP;
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) && attr->create_flags)
		return EOPNOTSUPP;
	switch (attr->qp_type) {
	case IBV_QPT_RC:
	case IBV_QPT_XRC_SEND:
		return (send_ops & ~(uint64_t)XRXE_RC_SEND_OPS) ? EOPNOTSUPP : 0;
	case IBV_QPT_UC:
		return (send_ops & ~(uint64_t)XRXE_UC_SEND_OPS) ? EOPNOTSUPP : 0;
	case IBV_QPT_XRC_RECV:
		return send_ops ? EINVAL : 0; /* a TGT never sends */
	default:
		return EOPNOTSUPP; /* UD (no address handles here), raw packet, driver QPs */
	}
}

static uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/* Maps the rings the kernel made and checks that the ones this QP type posts to exist. */
static int qp_map(struct xrxe_qp *qp, int cmd_fd, const struct ibv_qp_init_attr_ex *attr,
		  const struct rxe_create_qp_resp *drv)
{
	bool needs_sq = attr->qp_type != IBV_QPT_XRC_RECV;
	bool needs_rq = (attr->qp_type == IBV_QPT_RC || attr->qp_type == IBV_QPT_UC) && !attr->srq;
	int err = xrxe_ring_map(&qp->sq, cmd_fd, &drv->sq_mi);

	if (err)
		return err;
	err = xrxe_ring_map(&qp->rq, cmd_fd, &drv->rq_mi);
	if (err) {
		xrxe_ring_unmap(&qp->sq);
		return err;
	}
	if ((needs_sq && !qp->sq.buf) || (needs_rq && !qp->rq.buf)) {
		XRXE_DEBUG("QP type %d: kernel gave sq_mi.size %u rq_mi.size %u", attr->qp_type, drv->sq_mi.size,
			   drv->rq_mi.size);
		xrxe_ring_unmap(&qp->rq);
		xrxe_ring_unmap(&qp->sq);
		return EPROTO;
	}
	if (qp->sq.buf) {
		size_t elem = ring_elem_size(qp->sq.buf);

		qp->max_send_sge = min_u32(attr->cap.max_send_sge,
					   (elem - offsetof(struct rxe_send_wqe, dma.sge)) / sizeof(struct rxe_sge));
		qp->max_inline = min_u32(attr->cap.max_inline_data, elem - offsetof(struct rxe_send_wqe, dma.inline_data));
	}
	if (qp->rq.buf)
		qp->max_recv_sge = min_u32(attr->cap.max_recv_sge, (ring_elem_size(qp->rq.buf) -
				   offsetof(struct rxe_recv_wqe, dma.sge)) / sizeof(struct rxe_sge));
	return 0;
}

static struct ibv_qp *create_qp_common(struct ibv_context *context, struct ibv_qp_init_attr_ex *attr)
{
	struct ibv_create_qp_ex cmd = {0};
	struct xrxe_create_qp_resp resp = {0};
	struct xrxe_qp *qp;
	int err = check_qp_init_attr(attr);

	if (err) {
		errno = err;
		return NULL;
	}
	/* A TGT has no queues, so its capabilities mean nothing; callers still fill them in
	 * (perftest passes its receive depth), and the kernel refuses receive capabilities. */
	if (attr->qp_type == IBV_QPT_XRC_RECV)
		memset(&attr->cap, 0, sizeof(attr->cap));
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	err = ibv_cmd_create_qp_ex2(context, &qp->vqp, attr, &cmd, sizeof(cmd), &resp.core, sizeof(resp));
	if (err) {
		free(qp);
		errno = err;
		return NULL;
	}
	err = qp_map(qp, context->cmd_fd, attr, &resp.drv);
	if (err) {
		ibv_cmd_destroy_qp(&qp->vqp.qp);
		free(qp);
		errno = err;
		return NULL;
	}
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		install_send_ops(qp, attr->send_ops_flags);
		qp->vqp.comp_mask |= VERBS_QP_EX; /* lets ibv_qp_to_qp_ex() hand out qp_ex */
	}
	XRXE_DEBUG("QP %u type %d: sq %s, rq %s", qp->vqp.qp.qp_num, attr->qp_type, qp->sq.buf ? "mapped" : "none",
		   qp->rq.buf ? "mapped" : "none");
	return &qp->vqp.qp;
}

struct ibv_qp *xrxe_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	TRACE_OP();
	/* ibv_create_qp_ex() with only a PD comes here too, so XRC INI does as well */
	struct ibv_qp_init_attr_ex attr_ex = {
		.qp_context = attr->qp_context,
		.send_cq = attr->send_cq,
		.recv_cq = attr->recv_cq,
		.srq = attr->srq,
		.cap = attr->cap,
		.qp_type = attr->qp_type,
		.sq_sig_all = attr->sq_sig_all,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = pd,
	};
	struct ibv_qp *qp = create_qp_common(pd->context, &attr_ex);

	if (qp)
		attr->cap = attr_ex.cap;
	return qp;
}

struct ibv_qp *xrxe_create_qp_ex(struct ibv_context *context, struct ibv_qp_init_attr_ex *attr)
{
	TRACE_OP();
	return create_qp_common(context, attr);
}

struct ibv_qp *xrxe_open_qp(struct ibv_context *context, struct ibv_qp_open_attr *attr)
{
	TRACE_OP();
	struct ibv_open_qp cmd = {0};
	struct ib_uverbs_create_qp_resp resp = {0};
	struct xrxe_qp *qp = calloc(1, sizeof(*qp));
	struct mminfo no_queue = {0};
	int err;

	if (!qp)
		return NULL;
	err = ibv_cmd_open_qp(context, &qp->vqp, sizeof(qp->vqp), attr, &cmd, sizeof(cmd), &resp, sizeof(resp));
	if (err) {
		free(qp);
		errno = err;
		return NULL;
	}
	/* A QP opened by number is someone else's TGT: no rings here, only modify/query/destroy. */
	xrxe_ring_map(&qp->sq, context->cmd_fd, &no_queue);
	xrxe_ring_map(&qp->rq, context->cmd_fd, &no_queue);
	return &qp->vqp.qp;
}

int xrxe_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	TRACE_OP();
	struct ibv_query_qp cmd = {0};

	return ibv_cmd_query_qp(qp, attr, attr_mask, init_attr, &cmd, sizeof(cmd));
}

int xrxe_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask)
{
	TRACE_OP();
	struct ibv_modify_qp cmd = {0};

	return ibv_cmd_modify_qp(qp, attr, attr_mask, &cmd, sizeof(cmd));
}

int xrxe_destroy_qp(struct ibv_qp *ibqp)
{
	TRACE_OP();
	struct xrxe_qp *qp = to_xqp(ibqp);
	int err = ibv_cmd_destroy_qp(ibqp);

	if (err)
		return err;
	xrxe_ring_unmap(&qp->rq);
	xrxe_ring_unmap(&qp->sq);
	free(qp);
	return 0;
}

/* ---- posting ------------------------------------------------------------------------------ */

static int build_send_wqe(struct xrxe_qp *qp, struct rxe_send_wqe *wqe, const struct ibv_send_wr *wr)
{
	enum ibv_qp_type type = qp->vqp.qp.qp_type;
	bool is_inline = wr->send_flags & IBV_SEND_INLINE;
	uint32_t length = 0;

	if (!opcode_allowed(type, wr->opcode) || wr->num_sge < 0)
		return EINVAL;
	for (int i = 0; i < wr->num_sge; i++)
		length += wr->sg_list[i].length;
	if (is_inline ? length > qp->max_inline : (uint32_t)wr->num_sge > qp->max_send_sge)
		return EINVAL;
	if (is_atomic(wr->opcode) && (is_inline || wr->num_sge != 1 || length < 8 || (wr->wr.atomic.remote_addr & 7)))
		return EINVAL;

	memset(wqe, 0, sizeof(*wqe));
	wqe->wr.wr_id = wr->wr_id;
	wqe->wr.opcode = wr->opcode;
	wqe->wr.send_flags = wr->send_flags;
	if (type == IBV_QPT_XRC_SEND)
		wqe->wr.reserved = wr->qp_type.xrc.remote_srqn; /* the kernel reads it as srq_num */
	switch (wr->opcode) {
	case IBV_WR_SEND_WITH_IMM:
		wqe->wr.ex.imm_data = wr->imm_data;
		break;
	case IBV_WR_SEND_WITH_INV:
		wqe->wr.ex.invalidate_rkey = wr->invalidate_rkey;
		break;
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		wqe->wr.ex.imm_data = wr->imm_data;
		set_remote(wqe, wr->wr.rdma.rkey, wr->wr.rdma.remote_addr);
		break;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_READ:
		set_remote(wqe, wr->wr.rdma.rkey, wr->wr.rdma.remote_addr);
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		wqe->wr.wr.atomic.remote_addr = wr->wr.atomic.remote_addr;
		wqe->wr.wr.atomic.compare_add = wr->wr.atomic.compare_add;
		wqe->wr.wr.atomic.swap = wr->wr.atomic.swap;
		wqe->wr.wr.atomic.rkey = wr->wr.atomic.rkey;
		wqe->iova = wr->wr.atomic.remote_addr;
		break;
	default:
		break;
	}
	if (is_inline) {
		uint8_t *dst = wqe->dma.inline_data;

		for (int i = 0; i < wr->num_sge; i++) {
			memcpy(dst, (const void *)(uintptr_t)wr->sg_list[i].addr, wr->sg_list[i].length);
			dst += wr->sg_list[i].length;
		}
	} else {
		for (int i = 0; i < wr->num_sge; i++) {
			wqe->dma.sge[i].addr = wr->sg_list[i].addr;
			wqe->dma.sge[i].length = wr->sg_list[i].length;
			wqe->dma.sge[i].lkey = wr->sg_list[i].lkey;
		}
		wqe->dma.num_sge = (uint32_t)wr->num_sge;
	}
	wqe->dma.length = length;
	wqe->dma.resid = length;
	return 0;
}

int xrxe_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr)
{
	TRACE_OP();
	struct xrxe_qp *qp = to_xqp(ibqp);
	struct rxe_queue_buf *q = qp->sq.buf;
	uint32_t first, producer;
	int err = 0;

	if (!q) {
		*bad_wr = wr; /* XRC TGT or an opened QP: nothing to send from */
		return EINVAL;
	}
	pthread_spin_lock(&qp->sq.lock);
	first = producer = ring_own_producer(q);
	for (; wr; wr = wr->next) {
		err = ring_full_at(q, producer) ? ENOMEM : build_send_wqe(qp, ring_slot(q, producer), wr);
		if (err)
			break;
		producer = ring_next(q, producer);
	}
	ring_publish_producer(q, producer); /* everything before the failed request is posted */
	pthread_spin_unlock(&qp->sq.lock);
	if (err)
		*bad_wr = wr;
	if (producer != first) {
		int doorbell_err = ring_send_doorbell(ibqp);

		if (!err)
			err = doorbell_err;
	}
	return err;
}

int xrxe_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr)
{
	TRACE_OP();
	struct xrxe_qp *qp = to_xqp(ibqp);
	int err = 0;

	/* no ring with an SRQ, for XRC INI and TGT; nothing may be posted before INIT */
	if (!qp->rq.buf || ibqp->state == IBV_QPS_RESET) {
		*bad_wr = wr;
		return EINVAL;
	}
	pthread_spin_lock(&qp->rq.lock);
	for (; wr; wr = wr->next) {
		err = xrxe_post_one_recv(&qp->rq, qp->max_recv_sge, wr);
		if (err) {
			*bad_wr = wr;
			break;
		}
	}
	pthread_spin_unlock(&qp->rq.lock);
	return err;
}
