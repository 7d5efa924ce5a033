/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * XRC (eXtended Reliable Connected transport, InfiniBand Architecture annex A14) for soft-RoCE.
 * Part of the xmsg test harness: built into Debian's rdma_rxe by tests/softroce/rxe-xrc.
 *
 * XRC is RC's reliable transport with one difference on the wire (every request carries an
 * XRCETH naming the receiving SRQ) and one in the objects (the receive side is a TGT QP of an
 * XRC domain that delivers into whichever XRC SRQ of that domain a request names). So rxe's RC
 * state machines run XRC QPs unchanged (qp_type() reports IB_QPT_RC for both XRC types) and the
 * XRC logic sits at the few points where the two differ:
 *   - transmit: INI requests leave with XRC opcodes and an XRCETH (rxe_xrc_req_*), TGT
 *     responses with XRC opcodes (rxe_xrc_resp_opcode);
 *   - receive: after the ICRC check an XRC packet is rewritten in place to its RC form, the
 *     SRQ number kept just in front of the BTH (rxe_xrc_rcv_normalize);
 *   - responder: a TGT binds, per message, the SRQ the request names, after checking that it
 *     is an XRC SRQ of the TGT's domain; completions go to that SRQ's CQ and rkeys are checked
 *     against that SRQ's PD (rxe_xrc_resp_bind_srq).
 */
#ifndef RXE_XRC_H
#define RXE_XRC_H

struct rxe_xrcd {
	struct ib_xrcd ibxrcd;
};

enum {
	/* transport class 101b of the BTH opcode (IBA 9.2, table 38); 6.1's ib_pack.h has no XRC */
	RXE_OPCODE_XRC = 0xa0,
	RXE_XRCETH_BYTES = 4,
	RXE_XRC_SRQN_MASK = 0x00ffffff,
};

static inline bool rxe_qp_type_is_xrc(enum ib_qp_type type)
{
	return type == IB_QPT_XRC_INI || type == IB_QPT_XRC_TGT;
}

/* rxe_verbs.c: the device ops */
int rxe_alloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata);
int rxe_dealloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata);
int rxe_xrc_srq_init(struct rxe_srq *srq, struct ib_srq_init_attr *init);

/* rxe.c: fills the XRC rows of rxe_opcode[] from the RC rows, once at module load */
void rxe_xrc_init_opcodes(void);

/* rxe_qp.c: creation and teardown of INI and TGT QPs */
int rxe_xrc_qp_chk_init(struct rxe_dev *rxe, struct ib_qp_init_attr *init);
int rxe_xrc_qp_from_init(struct rxe_dev *rxe, struct rxe_qp *qp,
			 struct ib_qp_init_attr *init,
			 struct rxe_create_qp_resp __user *uresp,
			 struct ib_udata *udata);
void rxe_xrc_qp_cleanup(struct rxe_qp *qp);
/* rxe_qp.c's own pieces, shared with rxe_xrc_qp_from_init */
void rxe_qp_init_misc(struct rxe_dev *rxe, struct rxe_qp *qp,
		      struct ib_qp_init_attr *init);
int rxe_qp_init_req(struct rxe_dev *rxe, struct rxe_qp *qp,
		    struct ib_qp_init_attr *init, struct ib_udata *udata,
		    struct rxe_create_qp_resp __user *uresp);
int rxe_qp_init_resp(struct rxe_dev *rxe, struct rxe_qp *qp,
		     struct ib_qp_init_attr *init, struct ib_udata *udata,
		     struct rxe_create_qp_resp __user *uresp);

/* rxe_recv.c */
int rxe_xrc_check_type(struct rxe_qp *qp, unsigned int pkt_type, u32 mask);
void rxe_xrc_rcv_normalize(struct rxe_pkt_info *pkt);

/* rxe_req.c */
void rxe_xrc_req_to_wire(struct rxe_qp *qp, struct rxe_pkt_info *pkt);
void rxe_xrc_req_set_xrceth(struct rxe_pkt_info *pkt,
			    struct rxe_send_wqe *wqe);

/* rxe_resp.c */
int rxe_xrc_resp_opcode(struct rxe_qp *qp, int opcode);
int rxe_xrc_resp_bind_srq(struct rxe_qp *qp, struct rxe_pkt_info *pkt);
void rxe_xrc_resp_release_srq(struct rxe_qp *qp);

#endif /* RXE_XRC_H */
