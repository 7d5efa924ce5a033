// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * XRC for soft-RoCE: domains, XRC SRQs, INI and TGT QPs, the XRC opcodes and the XRCETH.
 * See rxe_xrc.h for how this fits into rxe's RC machinery.
 */

#include "rxe.h"
#include "rxe_loc.h"
#include "rxe_queue.h"

/* ---- domains and SRQs --------------------------------------------------------------------- */

/*
 * ib_core does the sharing (one domain per inode, TGT QPs that outlive their creator,
 * ib_open_qp): the driver only has to provide the object.
 */
int rxe_alloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	return 0;
}

int rxe_dealloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	return 0;
}

/*
 * The number senders name in the XRCETH is the SRQ's pool index (rxe_srq_from_init); a TGT
 * finds the SRQ by it, so it must become visible to index lookups, which stock rxe never does
 * for SRQs (nothing looked them up before XRC).
 */
int rxe_xrc_srq_init(struct rxe_srq *srq, struct ib_srq_init_attr *init)
{
	if (init->srq_type != IB_SRQT_XRC)
		return 0;
	if (!init->ext.cq || !init->ext.xrc.xrcd)
		return -EINVAL;
	srq->ibsrq.ext.xrc.srq_num = srq->srq_num;
	rxe_finalize(srq);
	return 0;
}

/* ---- opcodes ------------------------------------------------------------------------------ */

/*
 * XRC opcodes are RC's with the transport class 101b (RXE_OPCODE_XRC) in the top three bits.
 * Requests carry the 4-byte XRCETH right after the BTH, so every later header and the payload
 * move by 4; responses (ACK, READ RESPONSE, ATOMIC ACK) have the layout of RC's.
 */
void rxe_xrc_init_opcodes(void)
{
	int low, hdr;

	for (low = 0; low <= 0x1f; low++) {
		const struct rxe_opcode_info *rc = &rxe_opcode[IB_OPCODE_RC | low];
		struct rxe_opcode_info *xrc = &rxe_opcode[RXE_OPCODE_XRC | low];

		if (!rc->mask)
			continue;
		*xrc = *rc;
		if (!(rc->mask & RXE_REQ_MASK))
			continue;
		xrc->mask |= RXE_XRCETH_MASK;
		xrc->length += RXE_XRCETH_BYTES;
		for (hdr = 0; hdr < NUM_HDR_TYPES; hdr++) {
			if (hdr != RXE_BTH && rc->offset[hdr])
				xrc->offset[hdr] += RXE_XRCETH_BYTES;
		}
		xrc->offset[RXE_XRCETH] = rc->offset[RXE_BTH] + RXE_BTH_BYTES;
	}
}

static int xrc_to_rc_opcode(int opcode)
{
	return (opcode & 0xe0) == RXE_OPCODE_XRC ? IB_OPCODE_RC | (opcode & 0x1f) : opcode;
}

static int rc_to_xrc_opcode(int opcode)
{
	return (opcode & 0xe0) == IB_OPCODE_RC ? RXE_OPCODE_XRC | (opcode & 0x1f) : opcode;
}

/* ---- QPs ---------------------------------------------------------------------------------- */

int rxe_xrc_qp_chk_init(struct rxe_dev *rxe, struct ib_qp_init_attr *init)
{
	struct ib_qp_cap *cap = &init->cap;

	if (init->srq || init->recv_cq)
		return -EINVAL; /* neither XRC QP has a receive queue of its own */

	/*
	 * A TGT's capabilities are ignored (rxe_xrc_qp_from_init gives it no queues), as on mlx5:
	 * perftest, for one, asks its TGTs for receive entries.
	 */
	if (init->qp_type == IB_QPT_XRC_TGT)
		return init->xrcd ? 0 : -EINVAL;
	if (cap->max_recv_wr || cap->max_recv_sge)
		return -EINVAL;

	if (!init->send_cq)
		return -EINVAL;
	if (cap->max_send_wr > rxe->attr.max_qp_wr ||
	    cap->max_send_sge > rxe->attr.max_send_sge ||
	    cap->max_inline_data > rxe->max_inline_data)
		return -EINVAL;
	return 0;
}

/*
 * An INI has a send queue and no receive queue, a TGT neither. Both still get zero-capacity
 * queues where they have none: the RC paths they share (reset, error flush, drain) look at
 * both queues, and an empty queue is what those paths expect of a QP with nothing posted.
 * Only the INI's send queue is mapped to user space.
 */
int rxe_xrc_qp_from_init(struct rxe_dev *rxe, struct rxe_qp *qp,
			 struct ib_qp_init_attr *init,
			 struct rxe_create_qp_resp __user *uresp,
			 struct ib_udata *udata)
{
	bool ini = init->qp_type == IB_QPT_XRC_INI;
	struct ib_qp_init_attr queues = *init;
	int err;

	if (!ini) {
		queues.cap.max_send_wr = 0;
		queues.cap.max_send_sge = 0;
		queues.cap.max_inline_data = 0;
	}

	if (uresp && clear_user(&uresp->rq_mi, sizeof(uresp->rq_mi)))
		return -EFAULT;
	if (uresp && !ini && clear_user(&uresp->sq_mi, sizeof(uresp->sq_mi)))
		return -EFAULT;

	if (ini) {
		struct rxe_pd *pd = to_rpd(qp->ibqp.pd);
		struct rxe_cq *scq = to_rcq(init->send_cq);

		rxe_get(pd);
		rxe_get(scq);
		atomic_inc(&scq->num_wq);
		qp->pd = pd;
		qp->scq = scq;
	}

	rxe_qp_init_misc(rxe, qp, &queues);

	err = rxe_qp_init_req(rxe, qp, &queues, udata, ini ? uresp : NULL);
	if (err)
		goto err_put;

	err = rxe_qp_init_resp(rxe, qp, &queues, udata, NULL);
	if (err)
		goto err_sq;

	if (ini)
		init->cap = queues.cap;
	qp->attr.qp_state = IB_QPS_RESET;
	qp->valid = 1;
	return 0;

err_sq:
	rxe_queue_cleanup(qp->sq.queue);
	qp->sq.queue = NULL;
err_put:
	if (ini) {
		atomic_dec(&qp->scq->num_wq);
		rxe_put(qp->scq);
		rxe_put(qp->pd);
		qp->scq = NULL;
		qp->pd = NULL;
	}
	return err;
}

/* Before the QP's references are dropped: a TGT's SRQ, CQ and PD are borrowed from the SRQ. */
void rxe_xrc_qp_cleanup(struct rxe_qp *qp)
{
	if (qp->ibqp.qp_type != IB_QPT_XRC_TGT || !qp->srq)
		return;
	rxe_put(qp->srq);
	qp->srq = NULL;
	qp->rcq = NULL;
	qp->pd = NULL;
}

/* ---- receive ------------------------------------------------------------------------------ */

/* A TGT takes XRC requests only, an INI XRC responses only, an RC QP RC packets only. */
int rxe_xrc_check_type(struct rxe_qp *qp, unsigned int pkt_type, u32 mask)
{
	switch (qp->ibqp.qp_type) {
	case IB_QPT_XRC_TGT:
		return pkt_type == RXE_OPCODE_XRC && (mask & RXE_REQ_MASK) ? 0 : -EINVAL;
	case IB_QPT_XRC_INI:
		return pkt_type == RXE_OPCODE_XRC && !(mask & RXE_REQ_MASK) ? 0 : -EINVAL;
	default:
		return pkt_type == IB_OPCODE_RC ? 0 : -EINVAL;
	}
}

/*
 * Called once the ICRC has been checked. Rewrites an XRC packet into its RC form so that
 * rxe's responder and completer, which sequence packets by RC opcode, run it unchanged: the
 * BTH moves over the XRCETH and the SRQ number goes into the 4 bytes in front of the BTH,
 * where rxe_xrc_pkt_srqn() finds it (RXE_XRCETH_MASK stays set to say it is there).
 */
void rxe_xrc_rcv_normalize(struct rxe_pkt_info *pkt)
{
	int rc_opcode;
	u32 keep = pkt->mask & RXE_LOOPBACK_MASK;

	if ((pkt->opcode & 0xe0) != RXE_OPCODE_XRC)
		return;
	rc_opcode = xrc_to_rc_opcode(pkt->opcode);

	if (pkt->mask & RXE_XRCETH_MASK) {
		__be32 srqn = *(__be32 *)(pkt->hdr +
			rxe_opcode[pkt->opcode].offset[RXE_XRCETH]);

		memmove(pkt->hdr + RXE_XRCETH_BYTES, pkt->hdr, RXE_BTH_BYTES);
		pkt->hdr += RXE_XRCETH_BYTES;
		pkt->paylen -= RXE_XRCETH_BYTES;
		*(__be32 *)(pkt->hdr - RXE_XRCETH_BYTES) = srqn;
		keep |= RXE_XRCETH_MASK;
	}
	bth_set_opcode(pkt, rc_opcode);
	pkt->opcode = rc_opcode;
	pkt->mask = rxe_opcode[rc_opcode].mask | keep;
}

static u32 rxe_xrc_pkt_srqn(struct rxe_pkt_info *pkt)
{
	return be32_to_cpu(*(__be32 *)(pkt->hdr - RXE_XRCETH_BYTES)) &
	       RXE_XRC_SRQN_MASK;
}

/* ---- requester (INI) ---------------------------------------------------------------------- */

/* Before the packet is built: an INI sends the XRC form of the RC opcode next_opcode() chose. */
void rxe_xrc_req_to_wire(struct rxe_qp *qp, struct rxe_pkt_info *pkt)
{
	if (qp->ibqp.qp_type != IB_QPT_XRC_INI)
		return;
	pkt->opcode = rc_to_xrc_opcode(pkt->opcode);
	pkt->mask = rxe_opcode[pkt->opcode].mask;
}

/*
 * The remote SRQ number comes in the send WQE's word after wr_id (struct rxe_send_wr's
 * `reserved`), which the project's user-space provider fills from remote_srqn.
 */
void rxe_xrc_req_set_xrceth(struct rxe_pkt_info *pkt, struct rxe_send_wqe *wqe)
{
	__be32 *xrceth;

	if (!(pkt->mask & RXE_XRCETH_MASK))
		return;
	xrceth = (__be32 *)(pkt->hdr + rxe_opcode[pkt->opcode].offset[RXE_XRCETH]);
	*xrceth = cpu_to_be32(wqe->wr.reserved & RXE_XRC_SRQN_MASK);
}

/* ---- responder (TGT) ---------------------------------------------------------------------- */

int rxe_xrc_resp_opcode(struct rxe_qp *qp, int opcode)
{
	return qp->ibqp.qp_type == IB_QPT_XRC_TGT ? rc_to_xrc_opcode(opcode) : opcode;
}

/*
 * For each request a TGT receives: find the SRQ its XRCETH names and make it the QP's SRQ,
 * receive CQ and PD for this packet (and, while a message is half received, for the rest of
 * that message). The SRQ must be an XRC SRQ of the TGT's domain (A14.4.1); anything else is
 * refused and answered with an Invalid Request NAK by the caller. The binding holds a
 * reference on the SRQ only, which pins its PD and (through ib_core's use count) its CQ.
 */
int rxe_xrc_resp_bind_srq(struct rxe_qp *qp, struct rxe_pkt_info *pkt)
{
	struct rxe_dev *rxe = to_rdev(qp->ibqp.device);
	const char *why;
	struct rxe_srq *srq;
	u32 srqn;

	if (qp->ibqp.qp_type != IB_QPT_XRC_TGT)
		return 0;
	if (!(pkt->mask & RXE_XRCETH_MASK)) {
		pr_warn_ratelimited("rxe_xrc: TGT QP %d: request without an XRCETH\n", qp_num(qp));
		return -EINVAL;
	}
	srqn = rxe_xrc_pkt_srqn(pkt);

	if (qp->srq && qp->srq->srq_num == srqn)
		return 0;
	if (qp->resp.wqe) {
		why = "differs from the SRQ of the message in progress";
		goto refuse;
	}

	srq = rxe_pool_get_index(&rxe->srq_pool, srqn);
	if (!srq) {
		why = "no such SRQ";
		goto refuse;
	}
	why = srq->ibsrq.srq_type != IB_SRQT_XRC ? "not an XRC SRQ" :
	      srq->ibsrq.ext.xrc.xrcd != qp->ibqp.xrcd ? "an SRQ of another XRC domain" :
	      !srq->ibsrq.ext.cq ? "an XRC SRQ without a CQ" : NULL;
	if (why) {
		rxe_put(srq);
		goto refuse;
	}

	rxe_xrc_qp_cleanup(qp);
	qp->srq = srq;
	qp->rcq = to_rcq(srq->ibsrq.ext.cq);
	qp->pd = srq->pd;
	return 0;

refuse:
	/* Said once per burst: the sender also sees it, as IBV_WC_REM_INV_REQ_ERR. */
	pr_warn_ratelimited("rxe_xrc: TGT QP %d refuses a request from QP %d naming SRQ %u: %s\n",
			    qp_num(qp), qp->attr.dest_qp_num, srqn, why);
	return -EINVAL;
}

/* At the end of each request packet: keep the binding only while a message is half received. */
void rxe_xrc_resp_release_srq(struct rxe_qp *qp)
{
	if (qp->resp.wqe)
		return;
	rxe_xrc_qp_cleanup(qp);
}
