/* ops_selftest.c: proves on a real rxe device that every op libxmsg_rxe installs in
 * verbs_context_ops is the function libibverbs calls for the matching ibv_* entry point.
 *
 * Run with RDMAV_DRIVERS=<dir>/libxmsg_rxe (as any verbs program would). Each public call is
 * made with the provider's per-thread trace cleared, then the trace must name "xrxe_<op>": a
 * misordered op table would land in another function and fail here. Along the way real
 * traffic (RC loopback: send, receive, SRQ, RDMA write/read, atomics, the ibv_qp_ex API;
 * XRC INI -> TGT -> XRC SRQ when the device has XRC) checks the rings.
 * XRC ops are skipped, with the reason printed, only when the device lacks IBV_DEVICE_XRC.
 * Exit status 0 only if every op the provider sets was checked or skipped and all passed.
 *
 *   xmsg_rxe_ops_selftest [DEVICE]   (default: the first device) */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "xmsg_rxe_trace.h"

static const char *(*provider_last_op)(void);
static void (*provider_clear_last_op)(void);
static const char *const *(*provider_ops_set)(void);

enum { MAX_OPS = 80 };
static const char *checked_ops[MAX_OPS];
static int n_checked;
static const char *skipped_ops[MAX_OPS];
static int n_skipped;
static int failures;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("FAIL ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	failures++;
}

static bool listed(const char *const *list, int n, const char *op)
{
	for (int i = 0; i < n; i++)
		if (strcmp(list[i], op) == 0)
			return true;
	return false;
}

/* The call just made must have entered xrxe_<op>. */
static void expect_op(const char *op, const char *call)
{
	const char *entered = provider_last_op();
	char wanted[64];

	snprintf(wanted, sizeof(wanted), "xrxe_%s", op);
	if (!entered || strcmp(entered, wanted) != 0) {
		fail("%-16s %s entered %s, expected %s", op, call, entered ? entered : "no provider op", wanted);
		return;
	}
	printf("ok   %-16s %s -> %s\n", op, call, entered);
	if (!listed(checked_ops, n_checked, op) && n_checked < MAX_OPS)
		checked_ops[n_checked++] = op;
}
#define CHECK_OP(op, call)                    \
	do {                                  \
		provider_clear_last_op();     \
		call;                         \
		expect_op(op, #call);         \
	} while (0)

static void skip_op(const char *op, const char *reason)
{
	printf("skip %-16s %s\n", op, reason);
	if (n_skipped < MAX_OPS)
		skipped_ops[n_skipped++] = op;
}

/* A resource the rest depends on: without it there is nothing more to test. */
static void need(bool ok, const char *what)
{
	if (!ok) {
		fail("%s: %s", what, strerror(errno));
		printf("xmsg_rxe_ops_selftest: FAILED (cannot continue)\n");
		exit(1);
	}
}

static void need_rc(int rc, const char *what)
{
	errno = rc;
	need(rc == 0, what);
}

/* The provider libibverbs loaded from RDMAV_DRIVERS, found without loading it ourselves. */
static char provider_path[4096];
static void attach_to_provider(void)
{
	const char *drivers = getenv("RDMAV_DRIVERS");
	void *handle;

	if (!drivers || drivers[0] != '/') {
		printf("xmsg_rxe_ops_selftest: set RDMAV_DRIVERS=/abs/dir/libxmsg_rxe\n");
		exit(2);
	}
	snprintf(provider_path, sizeof(provider_path), "%.*s-rdmav34.so", (int)strcspn(drivers, ":;"), drivers);
	handle = dlopen(provider_path, RTLD_NOW | RTLD_NOLOAD);
	if (!handle) {
		printf("FAIL libibverbs did not load %s\n", provider_path);
		exit(1);
	}
	provider_last_op = (const char *(*)(void))dlsym(handle, "xmsg_rxe_last_op");
	provider_clear_last_op = (void (*)(void))dlsym(handle, "xmsg_rxe_clear_last_op");
	provider_ops_set = (const char *const *(*)(void))dlsym(handle, "xmsg_rxe_ops_set");
	if (!provider_last_op || !provider_clear_last_op || !provider_ops_set) {
		printf("FAIL %s lacks the xmsg_rxe_* trace exports\n", provider_path);
		exit(1);
	}
}

/* ---- connection and traffic helpers ----------------------------------------------------- */

struct port_addr {
	union ibv_gid gid;
	int gid_index;
};

static void find_ipv4_gid(struct ibv_context *ctx, struct port_addr *addr)
{
	for (int i = 0; i < 16; i++) {
		union ibv_gid gid;
		static const uint8_t v4_mapped[12] = { [10] = 0xff, [11] = 0xff };

		if (ibv_query_gid(ctx, 1, i, &gid) == 0 && memcmp(gid.raw, v4_mapped, 12) == 0) {
			addr->gid = gid;
			addr->gid_index = i;
			return;
		}
	}
	need(false, "no IPv4-mapped GID on port 1");
}

/* RESET -> INIT -> RTR (-> RTS unless a TGT), talking to remote_qpn on this same port. */
static void connect_qp(struct ibv_qp *qp, uint32_t remote_qpn, const struct port_addr *addr)
{
	bool ini = qp->qp_type == IBV_QPT_XRC_SEND, tgt = qp->qp_type == IBV_QPT_XRC_RECV;
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC,
	};

	need_rc(ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS),
		"modify_qp to INIT");
	attr = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTR,
		.path_mtu = IBV_MTU_1024,
		.dest_qp_num = remote_qpn,
		.max_dest_rd_atomic = 1,
		.min_rnr_timer = 12,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = addr->gid, .sgid_index = (uint8_t)addr->gid_index, .hop_limit = 1 } },
	};
	need_rc(ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				   (ini ? 0 : IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)),
		"modify_qp to RTR");
	if (tgt)
		return;
	attr = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
				     .max_rd_atomic = 1 };
	need_rc(ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				   IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC),
		"modify_qp to RTS");
}

/* Waits (the guest is emulated: generously) for the completion with this wr_id. Completions of
 * the same CQ may come in another order (a receive before its send): those are kept aside. */
static struct ibv_wc early_wcs[16];
static struct ibv_cq *early_cqs[16];
static int n_early;

static struct ibv_wc wait_wc(struct ibv_cq *cq, uint64_t wr_id, const char *what)
{
	struct timespec start, now;
	struct ibv_wc wc;

	for (int i = 0; i < n_early; i++) {
		if (early_cqs[i] == cq && early_wcs[i].wr_id == wr_id) {
			wc = early_wcs[i];
			early_wcs[i] = early_wcs[--n_early];
			early_cqs[i] = early_cqs[n_early];
			goto found;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		int n = ibv_poll_cq(cq, 1, &wc);

		if (n < 0)
			need(false, "ibv_poll_cq");
		if (n == 1 && wc.wr_id == wr_id)
			goto found;
		if (n == 1 && n_early < 16) {
			early_cqs[n_early] = cq;
			early_wcs[n_early++] = wc;
			continue;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - start.tv_sec > 20) {
			fail("%s: no completion within 20 s", what);
			wc.status = IBV_WC_GENERAL_ERR;
			return wc;
		}
	}
found:
	if (wc.status != IBV_WC_SUCCESS)
		fail("%s: status %s", what, ibv_wc_status_str(wc.status));
	return wc;
}

static void check_data(const char *got, const char *want, const char *what)
{
	if (strcmp(got, want) != 0)
		fail("%s: received \"%.40s\", sent \"%s\"", what, got, want);
	else
		printf("data %s\n", what);
}

enum { SLOT = 256 };
static char *slot(char *buf, int i) { return buf + i * SLOT; }
static struct ibv_sge sge_of(struct ibv_mr *mr, char *addr, uint32_t len)
{
	return (struct ibv_sge){ .addr = (uintptr_t)addr, .length = len, .lkey = mr->lkey };
}

static void post_recv_slot(struct ibv_qp *qp, struct ibv_srq *srq, struct ibv_mr *mr, char *addr, uint64_t wr_id)
{
	struct ibv_sge sge = sge_of(mr, addr, SLOT);
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 }, *bad;

	memset(addr, 0, SLOT);
	need_rc(srq ? ibv_post_srq_recv(srq, &wr, &bad) : ibv_post_recv(qp, &wr, &bad), "post receive");
}

static int post_one(struct ibv_qp *qp, enum ibv_wr_opcode opcode, struct ibv_sge *sge, uint64_t wr_id,
		    uint32_t xrc_srqn, uint64_t remote_addr, uint32_t rkey)
{
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = sge, .num_sge = 1, .opcode = opcode,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	wr.qp_type.xrc.remote_srqn = xrc_srqn;
	if (opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = remote_addr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 5;
	} else {
		wr.wr.rdma.remote_addr = remote_addr;
		wr.wr.rdma.rkey = rkey;
	}
	return ibv_post_send(qp, &wr, &bad);
}

/* ---- the XRC part ------------------------------------------------------------------------ */

static void test_xrc(struct ibv_context *ctx, struct ibv_pd *pd, struct ibv_mr *mr, char *buf,
		     struct ibv_cq *send_cq, const struct port_addr *addr)
{
	struct ibv_xrcd_init_attr xrcd_attr = { .comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
						.fd = -1, .oflags = O_CREAT };
	struct ibv_xrcd *xrcd;
	struct ibv_cq *xrc_cq;
	struct ibv_srq *xsrq;
	struct ibv_qp *tgt, *ini, *ini_plain, *opened;
	uint32_t srqn = 0;
	struct ibv_qp_attr qattr;
	struct ibv_qp_init_attr qinit;
	struct ibv_wc wc;

	CHECK_OP("open_xrcd", xrcd = ibv_open_xrcd(ctx, &xrcd_attr));
	need(xrcd, "ibv_open_xrcd");
	xrc_cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	need(xrc_cq, "ibv_create_cq for the XRC SRQ");
	struct ibv_srq_init_attr_ex srq_attr = {
		.attr = { .max_wr = 16, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC, .pd = pd, .xrcd = xrcd, .cq = xrc_cq,
	};
	CHECK_OP("create_srq_ex", xsrq = ibv_create_srq_ex(ctx, &srq_attr));
	need(xsrq, "ibv_create_srq_ex XRC");
	CHECK_OP("get_srq_num", need_rc(ibv_get_srq_num(xsrq, &srqn), "ibv_get_srq_num XRC"));
	printf("     XRC SRQ number %u\n", srqn);

	struct ibv_qp_init_attr_ex tgt_attr = { .qp_type = IBV_QPT_XRC_RECV, .comp_mask = IBV_QP_INIT_ATTR_XRCD,
						.xrcd = xrcd };
	CHECK_OP("create_qp_ex", tgt = ibv_create_qp_ex(ctx, &tgt_attr));
	need(tgt, "ibv_create_qp_ex XRC_RECV");
	struct ibv_qp_init_attr_ex ini_attr = {
		.qp_type = IBV_QPT_XRC_SEND, .send_cq = send_cq, .pd = pd,
		.cap = { .max_send_wr = 16, .max_send_sge = 1, .max_inline_data = 64 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE,
	};
	CHECK_OP("create_qp_ex", ini = ibv_create_qp_ex(ctx, &ini_attr));
	need(ini, "ibv_create_qp_ex XRC_SEND");
	ini_attr.comp_mask = IBV_QP_INIT_ATTR_PD; /* libibverbs sends a PD-only request to create_qp */
	CHECK_OP("create_qp", ini_plain = ibv_create_qp_ex(ctx, &ini_attr));
	need(ini_plain, "ibv_create_qp_ex XRC_SEND, PD only");

	connect_qp(tgt, ini->qp_num, addr);
	connect_qp(ini, tgt->qp_num, addr);

	struct ibv_qp_open_attr open_attr = { .comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
							   IBV_QP_OPEN_ATTR_TYPE,
					      .qp_num = tgt->qp_num, .xrcd = xrcd, .qp_type = IBV_QPT_XRC_RECV };
	CHECK_OP("open_qp", opened = ibv_open_qp(ctx, &open_attr));
	need(opened, "ibv_open_qp of the TGT");
	CHECK_OP("query_qp", need_rc(ibv_query_qp(opened, &qattr, IBV_QP_STATE, &qinit), "ibv_query_qp opened TGT"));
	if (qattr.qp_state != IBV_QPS_RTR)
		fail("opened TGT is in state %d, expected RTR", qattr.qp_state);

	/* INI -> TGT -> XRC SRQ, once through ibv_post_send and once through ibv_qp_ex */
	post_recv_slot(NULL, xsrq, mr, slot(buf, 10), 100);
	post_recv_slot(NULL, xsrq, mr, slot(buf, 11), 101);
	strcpy(slot(buf, 12), "xrc through ibv_post_send");
	struct ibv_sge sge = sge_of(mr, slot(buf, 12), (uint32_t)strlen(slot(buf, 12)) + 1);
	CHECK_OP("post_send", need_rc(post_one(ini, IBV_WR_SEND, &sge, 200, srqn, 0, 0), "post_send XRC"));
	wait_wc(send_cq, 200, "XRC send completion");
	wc = wait_wc(xrc_cq, 100, "XRC receive completion in the SRQ's CQ");
	if (wc.src_qp != ini->qp_num)
		fail("XRC receive: src_qp %u, expected the INI's %u", wc.src_qp, ini->qp_num);
	check_data(slot(buf, 10), slot(buf, 12), "XRC send INI -> TGT -> XRC SRQ (src_qp ok)");

	struct ibv_qp_ex *inix = ibv_qp_to_qp_ex(ini);
	need(inix, "ibv_qp_to_qp_ex of the INI");
	strcpy(slot(buf, 13), "xrc through ibv_wr_send");
	ibv_wr_start(inix);
	inix->wr_id = 201;
	inix->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(inix);
	ibv_wr_set_xrc_srqn(inix, srqn);
	ibv_wr_set_sge(inix, mr->lkey, (uintptr_t)slot(buf, 13), (uint32_t)strlen(slot(buf, 13)) + 1);
	need_rc(ibv_wr_complete(inix), "ibv_wr_complete XRC");
	wait_wc(send_cq, 201, "XRC ibv_wr_send completion");
	wait_wc(xrc_cq, 101, "XRC ibv_wr_send receive");
	check_data(slot(buf, 11), slot(buf, 13), "XRC ibv_wr_send + ibv_wr_set_xrc_srqn");

	/* a TGT has nothing to post to: errors, not crashes */
	int rc;
	CHECK_OP("post_send", rc = post_one(tgt, IBV_WR_SEND, &sge, 202, srqn, 0, 0));
	if (rc == 0)
		fail("ibv_post_send on an XRC TGT succeeded");
	struct ibv_recv_wr rwr = { .wr_id = 203, .sg_list = &sge, .num_sge = 1 }, *bad_rwr;
	CHECK_OP("post_recv", rc = ibv_post_recv(tgt, &rwr, &bad_rwr));
	if (rc == 0)
		fail("ibv_post_recv on an XRC TGT succeeded");

	CHECK_OP("destroy_qp", need_rc(ibv_destroy_qp(opened), "destroy opened TGT"));
	need_rc(ibv_destroy_qp(ini_plain), "destroy INI");
	need_rc(ibv_destroy_qp(ini), "destroy INI");
	need_rc(ibv_destroy_qp(tgt), "destroy TGT");
	need_rc(ibv_destroy_srq(xsrq), "destroy XRC SRQ");
	need_rc(ibv_destroy_cq(xrc_cq), "destroy XRC CQ");
	CHECK_OP("close_xrcd", need_rc(ibv_close_xrcd(xrcd), "ibv_close_xrcd"));
}

/* ---- main: every op, in the order a program meets them ----------------------------------- */

int main(int argc, char **argv)
{
	int num_devices, rc;
	struct ibv_device **devices;
	struct ibv_device *device = NULL;

	setvbuf(stdout, NULL, _IOLBF, 0); /* keep the lines already printed if a check crashes */
	devices = ibv_get_device_list(&num_devices);

	need(devices && num_devices > 0, "no RDMA device");
	attach_to_provider();
	for (int i = 0; i < num_devices && !device; i++)
		if (argc < 2 || strcmp(ibv_get_device_name(devices[i]), argv[1]) == 0)
			device = devices[i];
	need(device, "the device asked for is not there");

	struct ibv_context *ctx;
	provider_clear_last_op();
	ctx = ibv_open_device(device);
	need(ctx, "ibv_open_device");
	Dl_info where = { 0 };
	const char *entered = provider_last_op();
	if (!entered || strcmp(entered, "xrxe_alloc_context") != 0 ||
	    !dladdr((void *)ctx->ops.poll_cq, &where) || !where.dli_fname || !strstr(where.dli_fname, "libxmsg_rxe")) {
		printf("FAIL %s is not bound to %s (poll_cq lives in %s)\n", ibv_get_device_name(device), provider_path,
		       where.dli_fname ? where.dli_fname : "?");
		return 1;
	}
	printf("ok   %s bound to %s\n", ibv_get_device_name(device), where.dli_fname);

	struct ibv_device_attr dev_attr;
	struct ibv_device_attr_ex dev_attr_ex;
	struct ibv_port_attr port_attr;
	CHECK_OP("query_device_ex", need_rc(ibv_query_device(ctx, &dev_attr), "ibv_query_device"));
	CHECK_OP("query_device_ex", need_rc(ibv_query_device_ex(ctx, NULL, &dev_attr_ex), "ibv_query_device_ex"));
	CHECK_OP("query_port", need_rc(ibv_query_port(ctx, 1, &port_attr), "ibv_query_port"));
	bool has_xrc = dev_attr.device_cap_flags & IBV_DEVICE_XRC;
	printf("     device_cap_flags 0x%x: XRC %s\n", dev_attr.device_cap_flags, has_xrc ? "yes" : "no");

	struct port_addr addr;
	find_ipv4_gid(ctx, &addr);
	char gid_text[INET6_ADDRSTRLEN];
	printf("     port 1 GID index %d %s\n", addr.gid_index, inet_ntop(AF_INET6, addr.gid.raw, gid_text, sizeof(gid_text)));

	struct ibv_pd *pd;
	struct ibv_mr *mr;
	char *buf = aligned_alloc(4096, 32 * SLOT);
	need(buf, "buffer");
	memset(buf, 0, 32 * SLOT);
	CHECK_OP("alloc_pd", pd = ibv_alloc_pd(ctx));
	need(pd, "ibv_alloc_pd");
	CHECK_OP("reg_mr", mr = ibv_reg_mr(pd, buf, 32 * SLOT, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
							 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC));
	need(mr, "ibv_reg_mr");

	struct ibv_cq *cq, *a_recv_cq;
	CHECK_OP("create_cq", cq = ibv_create_cq(ctx, 32, NULL, NULL, 0));
	need(cq, "ibv_create_cq");
	a_recv_cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	need(a_recv_cq, "ibv_create_cq");
	CHECK_OP("req_notify_cq", need_rc(ibv_req_notify_cq(cq, 0), "ibv_req_notify_cq"));

	/* basic SRQs both ways; the second one is resized (new ring) before it is used */
	struct ibv_srq *srq, *srq_ex;
	struct ibv_srq_init_attr srq_attr = { .attr = { .max_wr = 8, .max_sge = 2 } };
	struct ibv_srq_init_attr_ex srq_ex_attr = {
		.attr = { .max_wr = 8, .max_sge = 1 }, .srq_type = IBV_SRQT_BASIC, .pd = pd, .cq = cq,
		.comp_mask = IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_CQ, /* not ibv_create_srq's */
	};
	struct ibv_srq_attr srq_mod = { .max_wr = 32, .srq_limit = 1 };
	uint32_t srq_num;
	CHECK_OP("create_srq", srq = ibv_create_srq(pd, &srq_attr));
	need(srq, "ibv_create_srq");
	CHECK_OP("create_srq_ex", srq_ex = ibv_create_srq_ex(ctx, &srq_ex_attr));
	need(srq_ex, "ibv_create_srq_ex basic");
	CHECK_OP("modify_srq", need_rc(ibv_modify_srq(srq, &srq_mod, IBV_SRQ_MAX_WR), "ibv_modify_srq resize"));
	CHECK_OP("modify_srq", need_rc(ibv_modify_srq(srq, &srq_mod, IBV_SRQ_LIMIT), "ibv_modify_srq limit"));
	CHECK_OP("query_srq", need_rc(ibv_query_srq(srq, &srq_mod), "ibv_query_srq"));
	if (srq_mod.max_wr < 32 || srq_mod.srq_limit != 1)
		fail("query_srq after resize: max_wr %u srq_limit %u", srq_mod.max_wr, srq_mod.srq_limit);
	CHECK_OP("get_srq_num", need_rc(ibv_get_srq_num(srq, &srq_num), "ibv_get_srq_num"));

	/* RC loopback: a has its own RQ (and receive CQ), b receives through srq */
	struct ibv_qp *qp_a, *qp_b;
	struct ibv_qp_init_attr a_attr = {
		.send_cq = cq, .recv_cq = a_recv_cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 2, .max_recv_sge = 2, .max_inline_data = 64 },
	};
	struct ibv_qp_init_attr_ex b_attr = {
		.send_cq = cq, .recv_cq = cq, .srq = srq, .qp_type = IBV_QPT_RC, .pd = pd,
		.cap = { .max_send_wr = 16, .max_send_sge = 2, .max_inline_data = 64 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_WRITE |
				  IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ,
	};
	CHECK_OP("create_qp", qp_a = ibv_create_qp(pd, &a_attr));
	need(qp_a, "ibv_create_qp RC");
	CHECK_OP("create_qp_ex", qp_b = ibv_create_qp_ex(ctx, &b_attr));
	need(qp_b, "ibv_create_qp_ex RC with send ops");
	CHECK_OP("modify_qp", connect_qp(qp_a, qp_b->qp_num, &addr));
	connect_qp(qp_b, qp_a->qp_num, &addr);
	struct ibv_qp_attr qattr;
	struct ibv_qp_init_attr qinit;
	CHECK_OP("query_qp", need_rc(ibv_query_qp(qp_a, &qattr, IBV_QP_STATE | IBV_QP_CAP, &qinit), "ibv_query_qp"));
	if (qattr.qp_state != IBV_QPS_RTS)
		fail("qp_a is in state %d after connecting, expected RTS", qattr.qp_state);

	/* a -> b through the SRQ, plain ibv_post_send */
	CHECK_OP("post_srq_recv", post_recv_slot(NULL, srq, mr, slot(buf, 0), 1));
	strcpy(slot(buf, 1), "rc send a -> b through the srq");
	struct ibv_sge sge = sge_of(mr, slot(buf, 1), (uint32_t)strlen(slot(buf, 1)) + 1);
	CHECK_OP("post_send", need_rc(post_one(qp_a, IBV_WR_SEND, &sge, 2, 0, 0, 0), "ibv_post_send"));
	CHECK_OP("poll_cq", wait_wc(cq, 2, "a's send completion"));
	wait_wc(cq, 1, "b's receive completion");
	check_data(slot(buf, 0), slot(buf, 1), "RC send, SRQ receive, ibv_poll_cq");

	/* b -> a with ibv_qp_ex: send with immediate, then RDMA write, write-with-imm, read */
	struct ibv_qp_ex *bx = ibv_qp_to_qp_ex(qp_b);
	need(bx, "ibv_qp_to_qp_ex");
	CHECK_OP("post_recv", post_recv_slot(qp_a, NULL, mr, slot(buf, 2), 3));
	post_recv_slot(qp_a, NULL, mr, slot(buf, 3), 4);
	strcpy(slot(buf, 4), "rc ibv_wr_send_imm b -> a");
	strcpy(slot(buf, 5), "inline rdma write");
	strcpy(slot(buf, 6), "write-with-imm in two sges");
	ibv_wr_start(bx);
	bx->wr_id = 10;
	bx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send_imm(bx, htonl(0x1234));
	ibv_wr_set_sge(bx, mr->lkey, (uintptr_t)slot(buf, 4), (uint32_t)strlen(slot(buf, 4)) + 1);
	bx->wr_id = 11;
	ibv_wr_rdma_write(bx, mr->rkey, (uintptr_t)slot(buf, 7));
	ibv_wr_set_inline_data(bx, slot(buf, 5), strlen(slot(buf, 5)) + 1);
	bx->wr_id = 12;
	ibv_wr_rdma_write_imm(bx, mr->rkey, (uintptr_t)slot(buf, 8), htonl(0x5678));
	struct ibv_sge two[2] = { sge_of(mr, slot(buf, 6), 10), sge_of(mr, slot(buf, 6) + 10,
									  (uint32_t)strlen(slot(buf, 6)) + 1 - 10) };
	ibv_wr_set_sge_list(bx, 2, two);
	need_rc(ibv_wr_complete(bx), "ibv_wr_complete");
	for (uint64_t id = 10; id <= 12; id++)
		wait_wc(cq, id, "b's ibv_qp_ex completion");
	for (uint64_t id = 3; id <= 4; id++) {
		struct ibv_wc wc = wait_wc(a_recv_cq, id, "a's receive with immediate");
		uint32_t imm = ntohl(wc.imm_data);

		if (!(wc.wc_flags & IBV_WC_WITH_IMM) || wc.qp_num != qp_a->qp_num || imm != (id == 3 ? 0x1234 : 0x5678))
			fail("receive %llu: wc_flags 0x%x qp_num %u imm 0x%x", (unsigned long long)id, wc.wc_flags,
			     wc.qp_num, imm);
	}
	check_data(slot(buf, 2), slot(buf, 4), "ibv_wr_send_imm (imm and qp_num in the completion)");
	check_data(slot(buf, 7), slot(buf, 5), "ibv_wr_rdma_write + ibv_wr_set_inline_data");
	check_data(slot(buf, 8), slot(buf, 6), "ibv_wr_rdma_write_imm + ibv_wr_set_sge_list");
	ibv_wr_start(bx);
	bx->wr_id = 13;
	ibv_wr_rdma_read(bx, mr->rkey, (uintptr_t)slot(buf, 7));
	ibv_wr_set_sge(bx, mr->lkey, (uintptr_t)slot(buf, 9), SLOT);
	need_rc(ibv_wr_complete(bx), "ibv_wr_complete read");
	wait_wc(cq, 13, "RDMA read completion");
	check_data(slot(buf, 9), slot(buf, 5), "ibv_wr_rdma_read");

	/* an atomic through ibv_post_send: fetch-and-add 5 on a counter of 37 */
	uint64_t *counter = (uint64_t *)slot(buf, 14), *fetched = (uint64_t *)slot(buf, 15);
	*counter = 37;
	sge = sge_of(mr, (char *)fetched, 8);
	need_rc(post_one(qp_a, IBV_WR_ATOMIC_FETCH_AND_ADD, &sge, 14, 0, (uintptr_t)counter, mr->rkey), "atomic");
	wait_wc(cq, 14, "fetch-and-add completion");
	if (*counter != 42 || *fetched != 37)
		fail("fetch-and-add: counter %llu fetched %llu, expected 42 and 37", (unsigned long long)*counter,
		     (unsigned long long)*fetched);
	else
		printf("data fetch-and-add through ibv_post_send\n");

	/* b has an SRQ, so its own receive queue does not exist */
	struct ibv_recv_wr rwr = { .wr_id = 99, .sg_list = &sge, .num_sge = 1 }, *bad_rwr;
	CHECK_OP("post_recv", rc = ibv_post_recv(qp_b, &rwr, &bad_rwr));
	if (rc == 0)
		fail("ibv_post_recv on a QP with an SRQ succeeded");

	if (has_xrc) {
		test_xrc(ctx, pd, mr, buf, cq, &addr);
	} else {
		const char *why = "device lacks IBV_DEVICE_XRC (stock rdma_rxe)";
		struct ibv_xrcd_init_attr xa = { .comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
						 .fd = -1, .oflags = O_CREAT };
		struct ibv_xrcd *xrcd;
		/* the op is still reached; only the kernel says no */
		CHECK_OP("open_xrcd", xrcd = ibv_open_xrcd(ctx, &xa));
		if (xrcd)
			fail("ibv_open_xrcd succeeded on a device without IBV_DEVICE_XRC");
		else
			printf("     (ibv_open_xrcd failed as it must here: %s)\n", strerror(errno));
		skip_op("close_xrcd", why);
		skip_op("open_qp", why);
		printf("skip XRC traffic (INI -> TGT -> XRC SRQ, wr_set_xrc_srqn): %s\n", why);
	}

	CHECK_OP("destroy_qp", need_rc(ibv_destroy_qp(qp_a), "ibv_destroy_qp"));
	need_rc(ibv_destroy_qp(qp_b), "ibv_destroy_qp");
	CHECK_OP("destroy_srq", need_rc(ibv_destroy_srq(srq), "ibv_destroy_srq"));
	need_rc(ibv_destroy_srq(srq_ex), "ibv_destroy_srq");
	CHECK_OP("destroy_cq", need_rc(ibv_destroy_cq(cq), "ibv_destroy_cq"));
	need_rc(ibv_destroy_cq(a_recv_cq), "ibv_destroy_cq");
	CHECK_OP("dereg_mr", need_rc(ibv_dereg_mr(mr), "ibv_dereg_mr"));
	CHECK_OP("dealloc_pd", need_rc(ibv_dealloc_pd(pd), "ibv_dealloc_pd"));
	CHECK_OP("free_context", need_rc(ibv_close_device(ctx), "ibv_close_device"));
	ibv_free_device_list(devices);
	free(buf);

	/* every op the provider installs must have been checked, or skipped for a stated reason */
	const char *const *ops = provider_ops_set();
	int n_set = 0;
	for (; ops[n_set]; n_set++)
		if (!listed(checked_ops, n_checked, ops[n_set]) && !listed(skipped_ops, n_skipped, ops[n_set]))
			fail("%s is set in verbs_context_ops but was never checked", ops[n_set]);
	printf("checked %d of the %d ops set:", n_checked, n_set);
	for (int i = 0; i < n_checked; i++)
		printf(" %s", checked_ops[i]);
	printf("\nskipped %d:", n_skipped);
	for (int i = 0; i < n_skipped; i++)
		printf(" %s", skipped_ops[i]);
	printf("\nxmsg_rxe_ops_selftest: %s (%d failure%s)\n", failures ? "FAILED" : "PASSED", failures,
	       failures == 1 ? "" : "s");
	return failures ? 1 : 0;
}
