/* provider_abi.h: the private provider interface of libibverbs 44 (symbol version
 * IBVERBS_PRIVATE_34) that this provider calls, written down from rdma-core v44.0's
 * libibverbs/driver.h and kern-abi.h because Debian ships no infiniband/driver.h.
 *
 * Only what the provider uses is declared, but every struct that libibverbs reads or writes
 * is declared whole and in its exact layout; the _Static_asserts at the end pin the sizes and
 * offsets measured from v44.0's own headers, so a drift fails the build instead of routing a
 * call to the wrong function at run time. */
#ifndef XMSG_RXE_PROVIDER_ABI_H
#define XMSG_RXE_PROVIDER_ABI_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/rdma_user_rxe.h>

/* Each uverbs struct ends in driver_data[], where the driver's own part follows; so
 * { struct ib_uverbs_x core; struct rxe_x drv; } is the exact layout. clang calls that a GNU
 * extension; gcc accepts it. */
#ifdef __clang__
#pragma clang diagnostic ignored "-Wgnu-variable-sized-type-not-at-end"
#endif

/* ---- objects the core shares with the provider ------------------------------------------- */

struct verbs_xrcd {
	struct ibv_xrcd xrcd;
	uint32_t comp_mask; /* VERBS_XRCD_HANDLE once handle is valid */
	uint32_t handle;
};
enum { VERBS_XRCD_HANDLE = 1 << 0 };

struct verbs_srq {
	struct ibv_srq srq;
	enum ibv_srq_type srq_type;
	struct verbs_xrcd *xrcd;
	struct ibv_cq *cq;
	uint32_t srq_num; /* filled by ibv_cmd_create_srq_ex for XRC SRQs */
};

enum { VERBS_QP_XRCD = 1 << 0, VERBS_QP_EX = 1 << 1 };
struct verbs_qp {
	union {
		struct ibv_qp qp;
		struct ibv_qp_ex qp_ex; /* ibv_qp_to_qp_ex() hands this out when VERBS_QP_EX is set */
	};
	uint32_t comp_mask;
	struct verbs_xrcd *xrcd;
};

struct verbs_cq {
	union {
		struct ibv_cq cq;
		struct ibv_cq_ex cq_ex;
	};
};

enum ibv_mr_type { IBV_MR_TYPE_MR, IBV_MR_TYPE_NULL_MR, IBV_MR_TYPE_IMPORTED_MR, IBV_MR_TYPE_DMABUF_MR };
struct verbs_mr {
	struct ibv_mr ibv_mr;
	enum ibv_mr_type mr_type;
	int access;
};

/* ---- device matching and registration ---------------------------------------------------- */

enum { VERBS_MATCH_SENTINEL = 0, VERBS_MATCH_PCI = 1, VERBS_MATCH_MODALIAS = 2, VERBS_MATCH_DRIVER_ID = 3 };
struct verbs_match_ent {
	void *driver_data;
	union {
		const char *modalias;
		uint64_t driver_id;
	} u;
	uint16_t vendor;
	uint16_t device;
	uint8_t kind;
};

struct verbs_sysfs_dev; /* opaque here: the provider reads nothing from it */

struct verbs_device_ops {
	const char *name;
	uint32_t match_min_abi_version;
	uint32_t match_max_abi_version;
	const struct verbs_match_ent *match_table;
	const struct verbs_device_ops **static_providers;
	bool (*match_device)(struct verbs_sysfs_dev *sysfs_dev);
	struct verbs_context *(*alloc_context)(struct ibv_device *device, int cmd_fd, void *private_data);
	struct verbs_context *(*import_context)(struct ibv_device *device, int cmd_fd);
	struct verbs_device *(*alloc_device)(struct verbs_sysfs_dev *sysfs_dev);
	void (*uninit_device)(struct verbs_device *device);
};

struct verbs_device {
	struct ibv_device device; /* must be first */
	const struct verbs_device_ops *ops;
	atomic_int refcount;
	struct { void *next, *prev; } entry; /* ccan list_node */
	struct verbs_sysfs_dev *sysfs;
	uint64_t core_support;
};

/* ---- the op table: every member in v44.0's order (it is sorted by name) ------------------- */

struct verbs_context_ops {
	int (*advise_mr)(struct ibv_pd *pd, enum ibv_advise_mr_advice advice, uint32_t flags,
			 struct ibv_sge *sg_list, uint32_t num_sges);
	struct ibv_dm *(*alloc_dm)(struct ibv_context *context, struct ibv_alloc_dm_attr *attr);
	struct ibv_mw *(*alloc_mw)(struct ibv_pd *pd, enum ibv_mw_type type);
	struct ibv_mr *(*alloc_null_mr)(struct ibv_pd *pd);
	struct ibv_pd *(*alloc_parent_domain)(struct ibv_context *context,
					      struct ibv_parent_domain_init_attr *attr);
	struct ibv_pd *(*alloc_pd)(struct ibv_context *context);
	struct ibv_td *(*alloc_td)(struct ibv_context *context, struct ibv_td_init_attr *init_attr);
	void (*async_event)(struct ibv_context *context, struct ibv_async_event *event);
	int (*attach_counters_point_flow)(struct ibv_counters *counters,
					  struct ibv_counter_attach_attr *attr, struct ibv_flow *flow);
	int (*attach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid);
	int (*bind_mw)(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind);
	int (*close_xrcd)(struct ibv_xrcd *xrcd);
	void (*cq_event)(struct ibv_cq *cq);
	struct ibv_ah *(*create_ah)(struct ibv_pd *pd, struct ibv_ah_attr *attr);
	struct ibv_counters *(*create_counters)(struct ibv_context *context,
						struct ibv_counters_init_attr *init_attr);
	struct ibv_cq *(*create_cq)(struct ibv_context *context, int cqe,
				    struct ibv_comp_channel *channel, int comp_vector);
	struct ibv_cq_ex *(*create_cq_ex)(struct ibv_context *context,
					  struct ibv_cq_init_attr_ex *init_attr);
	struct ibv_flow *(*create_flow)(struct ibv_qp *qp, struct ibv_flow_attr *flow_attr);
	struct ibv_flow_action *(*create_flow_action_esp)(struct ibv_context *context,
							  struct ibv_flow_action_esp_attr *attr);
	struct ibv_qp *(*create_qp)(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
	struct ibv_qp *(*create_qp_ex)(struct ibv_context *context,
				       struct ibv_qp_init_attr_ex *qp_init_attr_ex);
	struct ibv_rwq_ind_table *(*create_rwq_ind_table)(struct ibv_context *context,
							  struct ibv_rwq_ind_table_init_attr *init_attr);
	struct ibv_srq *(*create_srq)(struct ibv_pd *pd, struct ibv_srq_init_attr *srq_init_attr);
	struct ibv_srq *(*create_srq_ex)(struct ibv_context *context,
					 struct ibv_srq_init_attr_ex *srq_init_attr_ex);
	struct ibv_wq *(*create_wq)(struct ibv_context *context, struct ibv_wq_init_attr *wq_init_attr);
	int (*dealloc_mw)(struct ibv_mw *mw);
	int (*dealloc_pd)(struct ibv_pd *pd);
	int (*dealloc_td)(struct ibv_td *td);
	int (*dereg_mr)(struct verbs_mr *vmr);
	int (*destroy_ah)(struct ibv_ah *ah);
	int (*destroy_counters)(struct ibv_counters *counters);
	int (*destroy_cq)(struct ibv_cq *cq);
	int (*destroy_flow)(struct ibv_flow *flow);
	int (*destroy_flow_action)(struct ibv_flow_action *action);
	int (*destroy_qp)(struct ibv_qp *qp);
	int (*destroy_rwq_ind_table)(struct ibv_rwq_ind_table *rwq_ind_table);
	int (*destroy_srq)(struct ibv_srq *srq);
	int (*destroy_wq)(struct ibv_wq *wq);
	int (*detach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid);
	void (*free_context)(struct ibv_context *context);
	int (*free_dm)(struct ibv_dm *dm);
	int (*get_srq_num)(struct ibv_srq *srq, uint32_t *srq_num);
	struct ibv_dm *(*import_dm)(struct ibv_context *context, uint32_t dm_handle);
	struct ibv_mr *(*import_mr)(struct ibv_pd *pd, uint32_t mr_handle);
	struct ibv_pd *(*import_pd)(struct ibv_context *context, uint32_t pd_handle);
	int (*modify_cq)(struct ibv_cq *cq, struct ibv_modify_cq_attr *attr);
	int (*modify_flow_action_esp)(struct ibv_flow_action *action, struct ibv_flow_action_esp_attr *attr);
	int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask);
	int (*modify_qp_rate_limit)(struct ibv_qp *qp, struct ibv_qp_rate_limit_attr *attr);
	int (*modify_srq)(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr, int srq_attr_mask);
	int (*modify_wq)(struct ibv_wq *wq, struct ibv_wq_attr *wq_attr);
	struct ibv_qp *(*open_qp)(struct ibv_context *context, struct ibv_qp_open_attr *attr);
	struct ibv_xrcd *(*open_xrcd)(struct ibv_context *context, struct ibv_xrcd_init_attr *xrcd_init_attr);
	int (*poll_cq)(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
	int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);
	int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);
	int (*post_srq_ops)(struct ibv_srq *srq, struct ibv_ops_wr *op, struct ibv_ops_wr **bad_op);
	int (*post_srq_recv)(struct ibv_srq *srq, struct ibv_recv_wr *recv_wr, struct ibv_recv_wr **bad_recv_wr);
	int (*query_device_ex)(struct ibv_context *context, const struct ibv_query_device_ex_input *input,
			       struct ibv_device_attr_ex *attr, size_t attr_size);
	int (*query_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
	int (*query_port)(struct ibv_context *context, uint8_t port_num, struct ibv_port_attr *port_attr);
	int (*query_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
			struct ibv_qp_init_attr *init_attr);
	int (*query_qp_data_in_order)(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t flags);
	int (*query_rt_values)(struct ibv_context *context, struct ibv_values_ex *values);
	int (*query_srq)(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr);
	int (*read_counters)(struct ibv_counters *counters, uint64_t *counters_value, uint32_t ncounters,
			     uint32_t flags);
	struct ibv_mr *(*reg_dm_mr)(struct ibv_pd *pd, struct ibv_dm *dm, uint64_t dm_offset, size_t length,
				    unsigned int access);
	struct ibv_mr *(*reg_dmabuf_mr)(struct ibv_pd *pd, uint64_t offset, size_t length, uint64_t iova,
					int fd, int access);
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t length, uint64_t hca_va, int access);
	int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);
	int (*rereg_mr)(struct verbs_mr *vmr, int flags, struct ibv_pd *pd, void *addr, size_t length,
			int access);
	int (*resize_cq)(struct ibv_cq *cq, int cqe);
	int (*set_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
	void (*unimport_dm)(struct ibv_dm *dm);
	void (*unimport_mr)(struct ibv_mr *mr);
	void (*unimport_pd)(struct ibv_pd *pd);
};

/* ---- uverbs write commands: header + the kernel's request struct (kern-abi.h layout) ----
 * Any driver-private request data follows the struct; the ibv_cmd_* helpers pass what lies
 * beyond the core payload (and beyond the core response) to the driver as its udata. */

struct ex_hdr {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_ex_cmd_hdr ex_hdr;
};
#define XRXE_WRITE_CMD(name, kernel_req) \
	struct name { struct ib_uverbs_cmd_hdr hdr; struct kernel_req core_payload; }
#define XRXE_WRITE_CMD_EX(name, kernel_req) \
	struct name { struct ex_hdr hdr; struct kernel_req core_payload; }

XRXE_WRITE_CMD(ibv_get_context, ib_uverbs_get_context);
XRXE_WRITE_CMD(ibv_query_port, ib_uverbs_query_port);
XRXE_WRITE_CMD(ibv_alloc_pd, ib_uverbs_alloc_pd);
XRXE_WRITE_CMD(ibv_open_xrcd, ib_uverbs_open_xrcd);
XRXE_WRITE_CMD(ibv_reg_mr, ib_uverbs_reg_mr);
XRXE_WRITE_CMD(ibv_create_cq, ib_uverbs_create_cq);
XRXE_WRITE_CMD(ibv_create_srq, ib_uverbs_create_srq);
XRXE_WRITE_CMD(ibv_create_xsrq, ib_uverbs_create_xsrq);
XRXE_WRITE_CMD(ibv_modify_srq, ib_uverbs_modify_srq);
XRXE_WRITE_CMD(ibv_query_srq, ib_uverbs_query_srq);
XRXE_WRITE_CMD_EX(ibv_create_qp_ex, ib_uverbs_ex_create_qp);
XRXE_WRITE_CMD(ibv_open_qp, ib_uverbs_open_qp);
XRXE_WRITE_CMD(ibv_query_qp, ib_uverbs_query_qp);
XRXE_WRITE_CMD(ibv_modify_qp, ib_uverbs_modify_qp);
XRXE_WRITE_CMD(ibv_post_send, ib_uverbs_post_send);

/* ---- libibverbs entry points (all IBVERBS_PRIVATE_34) ------------------------------------ */

void verbs_register_driver_34(const struct verbs_device_ops *ops);
void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd, size_t alloc_size,
				    struct verbs_context *context_offset, uint32_t driver_id);
void verbs_uninit_context(struct verbs_context *context);
void verbs_set_ops(struct verbs_context *vctx, const struct verbs_context_ops *ops);

int ibv_cmd_get_context(struct verbs_context *context, struct ibv_get_context *cmd, size_t cmd_size,
			struct ib_uverbs_get_context_resp *resp, size_t resp_size);
int ibv_cmd_query_device_any(struct ibv_context *context, const struct ibv_query_device_ex_input *input,
			     struct ibv_device_attr_ex *attr, size_t attr_size,
			     struct ib_uverbs_ex_query_device_resp *resp, size_t *resp_size);
int ibv_cmd_query_port(struct ibv_context *context, uint8_t port_num, struct ibv_port_attr *port_attr,
		       struct ibv_query_port *cmd, size_t cmd_size);
int ibv_cmd_alloc_pd(struct ibv_context *context, struct ibv_pd *pd, struct ibv_alloc_pd *cmd,
		     size_t cmd_size, struct ib_uverbs_alloc_pd_resp *resp, size_t resp_size);
int ibv_cmd_dealloc_pd(struct ibv_pd *pd);
int ibv_cmd_open_xrcd(struct ibv_context *context, struct verbs_xrcd *xrcd, int vxrcd_size,
		      struct ibv_xrcd_init_attr *attr, struct ibv_open_xrcd *cmd, size_t cmd_size,
		      struct ib_uverbs_open_xrcd_resp *resp, size_t resp_size);
int ibv_cmd_close_xrcd(struct verbs_xrcd *xrcd);
int ibv_cmd_reg_mr(struct ibv_pd *pd, void *addr, size_t length, uint64_t hca_va, int access,
		   struct verbs_mr *vmr, struct ibv_reg_mr *cmd, size_t cmd_size,
		   struct ib_uverbs_reg_mr_resp *resp, size_t resp_size);
int ibv_cmd_dereg_mr(struct verbs_mr *vmr);
int ibv_cmd_create_cq(struct ibv_context *context, int cqe, struct ibv_comp_channel *channel,
		      int comp_vector, struct ibv_cq *cq, struct ibv_create_cq *cmd, size_t cmd_size,
		      struct ib_uverbs_create_cq_resp *resp, size_t resp_size);
int ibv_cmd_req_notify_cq(struct ibv_cq *cq, int solicited_only);
int ibv_cmd_destroy_cq(struct ibv_cq *cq);
int ibv_cmd_create_srq(struct ibv_pd *pd, struct ibv_srq *srq, struct ibv_srq_init_attr *attr,
		       struct ibv_create_srq *cmd, size_t cmd_size,
		       struct ib_uverbs_create_srq_resp *resp, size_t resp_size);
int ibv_cmd_create_srq_ex(struct ibv_context *context, struct verbs_srq *srq,
			  struct ibv_srq_init_attr_ex *attr_ex, struct ibv_create_xsrq *cmd, size_t cmd_size,
			  struct ib_uverbs_create_srq_resp *resp, size_t resp_size);
int ibv_cmd_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr, int srq_attr_mask,
		       struct ibv_modify_srq *cmd, size_t cmd_size);
int ibv_cmd_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr, struct ibv_query_srq *cmd,
		      size_t cmd_size);
int ibv_cmd_destroy_srq(struct ibv_srq *srq);
int ibv_cmd_create_qp_ex2(struct ibv_context *context, struct verbs_qp *qp,
			  struct ibv_qp_init_attr_ex *qp_attr, struct ibv_create_qp_ex *cmd, size_t cmd_size,
			  struct ib_uverbs_ex_create_qp_resp *resp, size_t resp_size);
int ibv_cmd_open_qp(struct ibv_context *context, struct verbs_qp *qp, int vqp_sz,
		    struct ibv_qp_open_attr *attr, struct ibv_open_qp *cmd, size_t cmd_size,
		    struct ib_uverbs_create_qp_resp *resp, size_t resp_size);
int ibv_cmd_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *qp_attr, int attr_mask,
		     struct ibv_qp_init_attr *qp_init_attr, struct ibv_query_qp *cmd, size_t cmd_size);
int ibv_cmd_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
		      struct ibv_modify_qp *cmd, size_t cmd_size);
int ibv_cmd_destroy_qp(struct ibv_qp *qp);

/* ---- layout checks: values measured by compiling rdma-core v44.0's driver.h (x86-64) ----- */
#if defined(__x86_64__)
#define XRXE_OP_INDEX(op) (offsetof(struct verbs_context_ops, op) / sizeof(void *))
_Static_assert(sizeof(struct verbs_context_ops) == 76 * sizeof(void *), "verbs_context_ops has 76 ops");
_Static_assert(XRXE_OP_INDEX(alloc_pd) == 5 && XRXE_OP_INDEX(close_xrcd) == 11, "op order");
_Static_assert(XRXE_OP_INDEX(create_cq) == 15 && XRXE_OP_INDEX(create_cq_ex) == 16, "op order");
_Static_assert(XRXE_OP_INDEX(create_qp) == 19 && XRXE_OP_INDEX(create_qp_ex) == 20, "op order");
_Static_assert(XRXE_OP_INDEX(create_srq) == 22 && XRXE_OP_INDEX(create_srq_ex) == 23, "op order");
_Static_assert(XRXE_OP_INDEX(dealloc_pd) == 26 && XRXE_OP_INDEX(dereg_mr) == 28, "op order");
_Static_assert(XRXE_OP_INDEX(destroy_cq) == 31 && XRXE_OP_INDEX(destroy_qp) == 34, "op order");
_Static_assert(XRXE_OP_INDEX(destroy_srq) == 36 && XRXE_OP_INDEX(free_context) == 39, "op order");
_Static_assert(XRXE_OP_INDEX(get_srq_num) == 41 && XRXE_OP_INDEX(modify_qp) == 47, "op order");
_Static_assert(XRXE_OP_INDEX(modify_srq) == 49 && XRXE_OP_INDEX(open_qp) == 51, "op order");
_Static_assert(XRXE_OP_INDEX(open_xrcd) == 52 && XRXE_OP_INDEX(poll_cq) == 53, "op order");
_Static_assert(XRXE_OP_INDEX(post_recv) == 54 && XRXE_OP_INDEX(post_send) == 55, "op order");
_Static_assert(XRXE_OP_INDEX(post_srq_recv) == 57 && XRXE_OP_INDEX(query_device_ex) == 58, "op order");
_Static_assert(XRXE_OP_INDEX(query_port) == 60 && XRXE_OP_INDEX(query_qp) == 61, "op order");
_Static_assert(XRXE_OP_INDEX(query_srq) == 64 && XRXE_OP_INDEX(reg_mr) == 68, "op order");
_Static_assert(XRXE_OP_INDEX(req_notify_cq) == 69 && XRXE_OP_INDEX(resize_cq) == 71, "op order");
_Static_assert(XRXE_OP_INDEX(unimport_pd) == 75, "op order");

_Static_assert(sizeof(struct verbs_device_ops) == 72, "verbs_device_ops");
_Static_assert(offsetof(struct verbs_device_ops, match_table) == 16, "verbs_device_ops");
_Static_assert(offsetof(struct verbs_device_ops, alloc_context) == 40, "verbs_device_ops");
_Static_assert(offsetof(struct verbs_device_ops, alloc_device) == 56, "verbs_device_ops");
_Static_assert(offsetof(struct verbs_device_ops, uninit_device) == 64, "verbs_device_ops");
_Static_assert(sizeof(struct verbs_match_ent) == 24 && offsetof(struct verbs_match_ent, kind) == 20, "match");
_Static_assert(offsetof(struct verbs_match_ent, u) == 8 && offsetof(struct verbs_match_ent, vendor) == 16, "match");
_Static_assert(sizeof(struct verbs_device) == 712 && offsetof(struct verbs_device, ops) == 664, "verbs_device");
_Static_assert(offsetof(struct verbs_device, refcount) == 672, "verbs_device");
_Static_assert(offsetof(struct verbs_device, sysfs) == 696, "verbs_device");
_Static_assert(offsetof(struct verbs_device, core_support) == 704, "verbs_device");
_Static_assert(sizeof(struct verbs_xrcd) == 16 && offsetof(struct verbs_xrcd, handle) == 12, "verbs_xrcd");
_Static_assert(sizeof(struct verbs_srq) == 160 && offsetof(struct verbs_srq, srq_num) == 152, "verbs_srq");
_Static_assert(offsetof(struct verbs_srq, srq_type) == 128 && offsetof(struct verbs_srq, cq) == 144, "verbs_srq");
_Static_assert(sizeof(struct verbs_qp) == 368 && offsetof(struct verbs_qp, comp_mask) == 352, "verbs_qp");
_Static_assert(offsetof(struct verbs_qp, xrcd) == 360, "verbs_qp");
_Static_assert(sizeof(struct verbs_cq) == 288, "verbs_cq");
_Static_assert(sizeof(struct verbs_mr) == 56 && offsetof(struct verbs_mr, access) == 52, "verbs_mr");
_Static_assert(sizeof(struct verbs_context) == 648, "verbs_context");

_Static_assert(sizeof(struct ex_hdr) == 24, "ex_hdr");
_Static_assert(sizeof(struct ibv_get_context) == 16 && sizeof(struct ibv_query_port) == 24, "cmd size");
_Static_assert(sizeof(struct ibv_alloc_pd) == 16 && sizeof(struct ibv_open_xrcd) == 24, "cmd size");
_Static_assert(sizeof(struct ibv_reg_mr) == 48 && sizeof(struct ibv_create_cq) == 40, "cmd size");
_Static_assert(sizeof(struct ibv_create_srq) == 40, "cmd size");
_Static_assert(sizeof(struct ibv_create_xsrq) == 56 && sizeof(struct ibv_modify_srq) == 24, "cmd size");
_Static_assert(sizeof(struct ibv_query_srq) == 24 && sizeof(struct ibv_create_qp_ex) == 88, "cmd size");
_Static_assert(sizeof(struct ibv_open_qp) == 40 && sizeof(struct ibv_query_qp) == 24, "cmd size");
_Static_assert(sizeof(struct ibv_modify_qp) == 120 && sizeof(struct ibv_post_send) == 32, "cmd size");
#endif

#endif
