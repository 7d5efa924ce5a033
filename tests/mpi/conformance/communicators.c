/* Conformance, MPI-3.1 chapters 6, 8 and 9: groups, communicator creation and comparison,
 * names, info, attributes with callbacks, the predefined attributes, error handlers and
 * classes, intercommunicators, and the environment (thread level, version, memory). */
#include "conformance.h"

static int rank, size;

static void test_groups(void) {
  MPI_Group world, evens, odds, uni, inter, diff, rng, excl;
  CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world));
  int gs = -1, gr = -1;
  CHECK_MPI(MPI_Group_size(world, &gs));
  CHECK_MPI(MPI_Group_rank(world, &gr));
  CHECK(gs == size && gr == rank, "world group size %d rank %d", gs, gr);
  int n_even = (size + 1) / 2;
  int* ranks = malloc(sizeof(int) * (size_t)size);
  for (int i = 0; i < n_even; ++i) ranks[i] = 2 * i;
  CHECK_MPI(MPI_Group_incl(world, n_even, ranks, &evens));
  CHECK_MPI(MPI_Group_excl(world, n_even, ranks, &odds));
  CHECK_MPI(MPI_Group_size(odds, &gs));
  CHECK(gs == size - n_even, "odds size %d", gs);
  CHECK_MPI(MPI_Group_rank(evens, &gr));
  CHECK(gr == (rank % 2 == 0 ? rank / 2 : MPI_UNDEFINED), "rank in evens %d", gr);
  CHECK_MPI(MPI_Group_union(odds, evens, &uni));
  int cmp = -1;
  CHECK_MPI(MPI_Group_compare(uni, world, &cmp));
  CHECK(cmp == (size <= 2 && size == 1 ? MPI_IDENT : (size == 1 ? MPI_IDENT : MPI_SIMILAR)), "union vs world %d", cmp);
  CHECK_MPI(MPI_Group_intersection(evens, world, &inter));
  CHECK_MPI(MPI_Group_compare(inter, evens, &cmp));
  CHECK(cmp == MPI_IDENT, "intersection %d", cmp);
  CHECK_MPI(MPI_Group_difference(world, evens, &diff));
  CHECK_MPI(MPI_Group_compare(diff, odds, &cmp));
  CHECK(cmp == MPI_IDENT || (size == 1), "difference %d", cmp);
  int range[1][3] = {{size - 1, 0, -1}}; /* reversed world */
  CHECK_MPI(MPI_Group_range_incl(world, 1, range, &rng));
  CHECK_MPI(MPI_Group_rank(rng, &gr));
  CHECK(gr == size - 1 - rank, "rank in reversed group %d", gr);
  int tr_in[2] = {0, size - 1}, tr_out[2] = {-5, -5};
  CHECK_MPI(MPI_Group_translate_ranks(rng, 2, tr_in, world, tr_out));
  CHECK(tr_out[0] == size - 1 && tr_out[1] == 0, "translate %d %d", tr_out[0], tr_out[1]);
  int range2[1][3] = {{0, size - 1, 2}};
  CHECK_MPI(MPI_Group_range_excl(world, 1, range2, &excl));
  CHECK_MPI(MPI_Group_compare(excl, odds, &cmp));
  CHECK(cmp == MPI_IDENT || size == 1, "range_excl %d", cmp);
  /* errors */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int bad[2] = {0, 0};
  MPI_Group g;
  CHECK(MPI_Group_incl(world, 2, bad, &g) != MPI_SUCCESS || size < 2, "duplicate rank in incl");
  int out_of_range = size;
  CHECK(MPI_Group_incl(world, 1, &out_of_range, &g) == MPI_ERR_RANK, "rank out of range");
  CHECK(MPI_Group_size((MPI_Group)99999, &gs) == MPI_ERR_GROUP, "invalid group");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  MPI_Group all[] = {world, evens, odds, uni, inter, diff, rng, excl};
  for (int i = 0; i < 8; ++i) {
    CHECK_MPI(MPI_Group_free(&all[i]));
    CHECK(all[i] == MPI_GROUP_NULL, "freed group %d", i);
  }
  free(ranks);
}

static void test_comm_creation(void) {
  MPI_Group world, evens;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  int n_even = (size + 1) / 2;
  int* ranks = malloc(sizeof(int) * (size_t)size);
  for (int i = 0; i < n_even; ++i) ranks[i] = 2 * i;
  MPI_Group_incl(world, n_even, ranks, &evens);
  MPI_Comm c1 = MPI_COMM_NULL, c2 = MPI_COMM_NULL;
  CHECK_MPI(MPI_Comm_create(MPI_COMM_WORLD, evens, &c1));
  if (rank % 2 == 0) {
    CHECK_MPI(MPI_Comm_create_group(MPI_COMM_WORLD, evens, 77, &c2));
    int r1 = -1, s1 = -1, r2 = -1;
    MPI_Comm_rank(c1, &r1);
    MPI_Comm_size(c1, &s1);
    MPI_Comm_rank(c2, &r2);
    CHECK(r1 == rank / 2 && s1 == n_even && r2 == rank / 2, "created comms: rank %d size %d rank %d", r1, s1, r2);
    int sum = 0, one = 1;
    CHECK_MPI(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c2));
    CHECK(sum == n_even, "allreduce on the created group %d", sum);
    int cmp = -1;
    CHECK_MPI(MPI_Comm_compare(c1, c2, &cmp));
    CHECK(cmp == MPI_CONGRUENT, "create vs create_group %d", cmp);
    CHECK_MPI(MPI_Comm_free(&c2));
  } else {
    CHECK(c1 == MPI_COMM_NULL, "not in the group: MPI_COMM_NULL");
  }
  if (c1 != MPI_COMM_NULL) CHECK_MPI(MPI_Comm_free(&c1));
  /* split_type SHARED */
  MPI_Comm node;
  CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  int ns = 0;
  MPI_Comm_size(node, &ns);
  CHECK(ns >= 1 && ns <= size, "node comm size %d", ns);
  /* Ranks share a node communicator exactly when they share a processor name (under
   * xmsgrun --nodes K each virtual node has its own name). */
  char pname[MPI_MAX_PROCESSOR_NAME];
  int plen = 0;
  CHECK_MPI(MPI_Get_processor_name(pname, &plen));
  char* names = malloc((size_t)size * MPI_MAX_PROCESSOR_NAME);
  CHECK_MPI(MPI_Allgather(pname, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names, MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
                          MPI_COMM_WORLD));
  int same_name = 0;
  for (int r = 0; r < size; ++r) same_name += strcmp(names + (size_t)r * MPI_MAX_PROCESSOR_NAME, pname) == 0;
  CHECK(same_name == ns, "%d ranks named '%s', node communicator of %d", same_name, pname, ns);
  free(names);
  MPI_Comm_free(&node);
  /* comparisons */
  MPI_Comm dup, rev;
  CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev));
  int cmp = -1;
  MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, &cmp);
  CHECK(cmp == MPI_IDENT, "ident %d", cmp);
  MPI_Comm_compare(MPI_COMM_WORLD, dup, &cmp);
  CHECK(cmp == MPI_CONGRUENT, "congruent %d", cmp);
  MPI_Comm_compare(MPI_COMM_WORLD, rev, &cmp);
  CHECK(cmp == (size == 1 ? MPI_CONGRUENT : MPI_SIMILAR), "similar %d", cmp);
  /* names */
  char name[MPI_MAX_OBJECT_NAME];
  int len = 0;
  CHECK_MPI(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
  CHECK(strcmp(name, "MPI_COMM_WORLD") == 0 && len == 14, "world name '%s'", name);
  CHECK_MPI(MPI_Comm_set_name(dup, "my dup"));
  CHECK_MPI(MPI_Comm_get_name(dup, name, &len));
  CHECK(strcmp(name, "my dup") == 0, "dup name '%s'", name);
  /* info on a communicator */
  MPI_Info info, got;
  MPI_Info_create(&info);
  MPI_Info_set(info, "mpi_assert_no_any_tag", "true");
  CHECK_MPI(MPI_Comm_set_info(dup, info));
  CHECK_MPI(MPI_Comm_get_info(dup, &got));
  char value[MPI_MAX_INFO_VAL];
  int flag = 0;
  CHECK_MPI(MPI_Info_get(got, "mpi_assert_no_any_tag", MPI_MAX_INFO_VAL - 1, value, &flag));
  CHECK(flag && strcmp(value, "true") == 0, "comm info '%s'", value);
  MPI_Info_free(&got);
  MPI_Comm withinfo;
  CHECK_MPI(MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &withinfo));
  MPI_Info_free(&info);
  MPI_Comm idup;
  MPI_Request r;
  CHECK_MPI(MPI_Comm_idup(MPI_COMM_WORLD, &idup, &r));
  CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
  int isize = 0;
  MPI_Comm_size(idup, &isize);
  CHECK(isize == size, "idup size %d", isize);
  MPI_Comm comms[] = {dup, rev, withinfo, idup};
  for (int i = 0; i < 4; ++i) CHECK_MPI(MPI_Comm_free(&comms[i]));
  MPI_Group_free(&world);
  MPI_Group_free(&evens);
  free(ranks);
}

static int copies, deletes;
static int copy_fn(MPI_Comm c, int key, void* extra, void* in, void* out, int* flag) {
  (void)c;
  (void)key;
  CHECK(*(int*)extra == 42, "extra state");
  ++copies;
  *(void**)out = in;
  *flag = 1;
  return MPI_SUCCESS;
}
static int delete_fn(MPI_Comm c, int key, void* value, void* extra) {
  (void)c;
  (void)key;
  (void)value;
  (void)extra;
  ++deletes;
  return MPI_SUCCESS;
}

static void test_attributes(void) {
  int* tag_ub = NULL;
  int flag = 0;
  CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag));
  CHECK(flag && *tag_ub >= 32767, "MPI_TAG_UB %d", flag ? *tag_ub : -1);
  int* universe = NULL;
  CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &universe, &flag));
  CHECK(flag && *universe == size, "MPI_UNIVERSE_SIZE %d", flag ? *universe : -1);
  int* wtime_global = NULL;
  CHECK_MPI(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &wtime_global, &flag));
  CHECK(flag && (*wtime_global == 0 || *wtime_global == 1), "MPI_WTIME_IS_GLOBAL");
  static int extra = 42;
  int key = MPI_KEYVAL_INVALID;
  CHECK_MPI(MPI_Comm_create_keyval(copy_fn, delete_fn, &key, &extra));
  static int payload = 7;
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  CHECK_MPI(MPI_Comm_set_attr(dup, key, &payload));
  MPI_Comm dup2;
  CHECK_MPI(MPI_Comm_dup(dup, &dup2));
  int* got = NULL;
  CHECK_MPI(MPI_Comm_get_attr(dup2, key, &got, &flag));
  CHECK(flag && got == &payload && copies == 1, "copied attribute (copies %d)", copies);
  CHECK_MPI(MPI_Comm_free(&dup2));
  CHECK(deletes == 1, "delete callback on free (%d)", deletes);
  CHECK_MPI(MPI_Comm_delete_attr(dup, key));
  CHECK(deletes == 2, "delete callback on delete (%d)", deletes);
  CHECK_MPI(MPI_Comm_get_attr(dup, key, &got, &flag));
  CHECK(flag == 0, "deleted attribute is gone");
  CHECK_MPI(MPI_Comm_free_keyval(&key));
  CHECK(key == MPI_KEYVAL_INVALID, "freed keyval");
  MPI_Comm_free(&dup);
  /* A keyval with MPI_COMM_NULL_COPY_FN is not copied by dup. */
  int key2;
  CHECK_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &key2, NULL));
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Comm_set_attr(dup, key2, &payload);
  MPI_Comm_dup(dup, &dup2);
  CHECK_MPI(MPI_Comm_get_attr(dup2, key2, &got, &flag));
  CHECK(flag == 0, "null copy fn: not copied");
  MPI_Comm_free(&dup2);
  MPI_Comm_free(&dup);
  MPI_Comm_free_keyval(&key2);
  /* datatype attributes */
  int tkey;
  CHECK_MPI(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, &tkey, NULL));
  MPI_Datatype t, t2;
  MPI_Type_contiguous(2, MPI_INT, &t);
  CHECK_MPI(MPI_Type_set_attr(t, tkey, &payload));
  CHECK_MPI(MPI_Type_dup(t, &t2));
  CHECK_MPI(MPI_Type_get_attr(t2, tkey, &got, &flag));
  CHECK(flag && got == &payload, "type attribute copied by MPI_TYPE_DUP_FN");
  MPI_Type_free(&t);
  MPI_Type_free(&t2);
  MPI_Type_free_keyval(&tkey);
}

static int handler_calls, handler_code;
static void my_handler(MPI_Comm* comm, int* code, ...) {
  (void)comm;
  ++handler_calls;
  handler_code = *code;
}

static void test_errors(void) {
  MPI_Errhandler eh, old;
  CHECK_MPI(MPI_Comm_create_errhandler(my_handler, &eh));
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  CHECK_MPI(MPI_Comm_set_errhandler(dup, eh));
  CHECK_MPI(MPI_Comm_get_errhandler(dup, &old));
  CHECK(old == eh, "get_errhandler");
  int x = 0;
  int code = MPI_Send(&x, 1, MPI_INT, size + 3, 0, dup);
  CHECK(code == MPI_ERR_RANK && handler_calls == 1 && handler_code == MPI_ERR_RANK, "user handler: code %d calls %d",
        code, handler_calls);
  CHECK_MPI(MPI_Comm_call_errhandler(dup, MPI_ERR_OTHER));
  CHECK(handler_calls == 2 && handler_code == MPI_ERR_OTHER, "call_errhandler");
  /* A dup inherits the error handler. */
  MPI_Comm dup2;
  MPI_Comm_dup(dup, &dup2);
  MPI_Comm_get_errhandler(dup2, &old);
  CHECK(old == eh, "inherited handler");
  MPI_Comm_free(&dup2);
  MPI_Comm_free(&dup);
  CHECK_MPI(MPI_Errhandler_free(&eh));
  CHECK(eh == MPI_ERRHANDLER_NULL, "freed handler");
  /* classes, strings, user classes */
  int cls = -1;
  MPI_Error_class(MPI_ERR_TOPOLOGY, &cls);
  CHECK(cls == MPI_ERR_TOPOLOGY, "class of a class");
  int newclass, newcode;
  CHECK_MPI(MPI_Add_error_class(&newclass));
  CHECK_MPI(MPI_Add_error_code(newclass, &newcode));
  CHECK_MPI(MPI_Add_error_string(newcode, "the program's own error"));
  MPI_Error_class(newcode, &cls);
  CHECK(cls == newclass && newclass > MPI_ERR_LASTCODE - 1, "user class %d of code %d", cls, newcode);
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  CHECK_MPI(MPI_Error_string(newcode, text, &len));
  CHECK(strcmp(text, "the program's own error") == 0, "user string '%s'", text);
  int* last = NULL;
  int flag = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag);
  CHECK(flag && *last >= newcode, "MPI_LASTUSEDCODE %d", flag ? *last : -1);
  const int classes[] = {MPI_ERR_BUFFER, MPI_ERR_COUNT, MPI_ERR_TYPE, MPI_ERR_TAG, MPI_ERR_COMM, MPI_ERR_RANK,
                         MPI_ERR_REQUEST, MPI_ERR_ROOT, MPI_ERR_GROUP, MPI_ERR_OP, MPI_ERR_TOPOLOGY, MPI_ERR_DIMS,
                         MPI_ERR_ARG, MPI_ERR_UNKNOWN, MPI_ERR_TRUNCATE, MPI_ERR_OTHER, MPI_ERR_INTERN,
                         MPI_ERR_IN_STATUS, MPI_ERR_PENDING, MPI_ERR_KEYVAL, MPI_ERR_NO_MEM, MPI_ERR_INFO,
                         MPI_ERR_INFO_KEY, MPI_ERR_INFO_VALUE, MPI_ERR_INFO_NOKEY, MPI_ERR_WIN,
                         MPI_ERR_UNSUPPORTED_OPERATION};
  for (size_t i = 0; i < sizeof classes / sizeof classes[0]; ++i) {
    CHECK(MPI_Error_string(classes[i], text, &len) == MPI_SUCCESS && len > 0, "string of class %d", classes[i]);
    for (size_t j = 0; j < i; ++j) CHECK(classes[i] != classes[j], "classes %zu and %zu are distinct", i, j);
    CHECK(classes[i] > MPI_SUCCESS && classes[i] < MPI_ERR_LASTCODE, "class %d below MPI_ERR_LASTCODE", classes[i]);
  }
}

static void test_info(void) {
  MPI_Info info, copy;
  CHECK_MPI(MPI_Info_create(&info));
  CHECK_MPI(MPI_Info_set(info, "a", "1"));
  CHECK_MPI(MPI_Info_set(info, "b", "two"));
  CHECK_MPI(MPI_Info_set(info, "a", "uno"));
  int n = 0, flag = 0, vlen = 0;
  MPI_Info_get_nkeys(info, &n);
  CHECK(n == 2, "nkeys %d", n);
  char key[MPI_MAX_INFO_KEY + 1], value[16];
  MPI_Info_get_nthkey(info, 1, key);
  CHECK(strcmp(key, "b") == 0, "nthkey '%s'", key);
  MPI_Info_get_valuelen(info, "a", &vlen, &flag);
  CHECK(flag && vlen == 3, "valuelen %d", vlen);
  MPI_Info_dup(info, &copy);
  MPI_Info_delete(info, "a");
  MPI_Info_get(info, "a", 15, value, &flag);
  CHECK(flag == 0, "deleted key");
  MPI_Info_get(copy, "a", 15, value, &flag);
  CHECK(flag && strcmp(value, "uno") == 0, "dup kept '%s'", value);
  MPI_Info_get(copy, "b", 1, value, &flag);
  CHECK(flag && strcmp(value, "t") == 0, "valuelen 1 truncates to '%s'", value);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CHECK(MPI_Info_delete(info, "zzz") == MPI_ERR_INFO_NOKEY, "delete of a missing key");
  CHECK(MPI_Info_set(info, "", "x") == MPI_ERR_INFO_KEY, "empty key");
  CHECK(MPI_Info_get_nkeys(MPI_INFO_NULL, &n) == MPI_ERR_INFO, "MPI_INFO_NULL is not an info object");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  MPI_Info_free(&info);
  MPI_Info_free(&copy);
  CHECK(info == MPI_INFO_NULL, "freed info");
}

/* Two halves (the lower and the upper ranks) joined by an intercommunicator. */
static void test_intercomm(void) {
  if (size < 2) return;
  int low = rank < size / 2;
  MPI_Comm half, inter, merged;
  MPI_Comm_split(MPI_COMM_WORLD, low, rank, &half);
  int remote_leader = low ? size / 2 : 0;
  CHECK_MPI(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, remote_leader, 99, &inter));
  int flag = 0, lsize = 0, rsize = 0, lrank = -1;
  MPI_Comm_test_inter(inter, &flag);
  MPI_Comm_size(inter, &lsize);
  MPI_Comm_remote_size(inter, &rsize);
  MPI_Comm_rank(inter, &lrank);
  int my_half = low ? size / 2 : size - size / 2, other = size - my_half;
  CHECK(flag == 1 && lsize == my_half && rsize == other, "inter: flag %d local %d remote %d", flag, lsize, rsize);
  CHECK(lrank == (low ? rank : rank - size / 2), "local rank %d", lrank);
  MPI_Group rg;
  MPI_Comm_remote_group(inter, &rg);
  int gs = 0;
  MPI_Group_size(rg, &gs);
  CHECK(gs == other, "remote group size %d", gs);
  MPI_Group_free(&rg);
  /* Point-to-point: local rank i of each side talks to remote rank i (when it exists). */
  if (lrank < other) {
    int out = rank, in = -1;
    MPI_Status st;
    CHECK_MPI(MPI_Sendrecv(&out, 1, MPI_INT, lrank, 5, &in, 1, MPI_INT, lrank, 5, inter, &st));
    int want = low ? lrank + size / 2 : lrank;
    CHECK(in == want && st.MPI_SOURCE == lrank, "inter sendrecv got %d from %d", in, st.MPI_SOURCE);
  }
  /* Collectives between the groups. Root: local rank 0 of the low group. */
  CHECK_MPI(MPI_Barrier(inter));
  int v = low ? 555 : -1;
  int root = low ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
  CHECK_MPI(MPI_Bcast(&v, 1, MPI_INT, root, inter));
  CHECK(low ? v == 555 : v == 555, "inter bcast %d", v);
  MPI_Request ib;
  int w = low ? 777 : -1;
  CHECK_MPI(MPI_Ibcast(&w, 1, MPI_INT, root, inter, &ib));
  CHECK_MPI(MPI_Wait(&ib, MPI_STATUS_IGNORE));
  CHECK(w == 777, "inter ibcast %d", w);
  /* allreduce: each group gets the sum over the other group's ranks */
  int sum_other = -1;
  CHECK_MPI(MPI_Allreduce(&rank, &sum_other, 1, MPI_INT, MPI_SUM, inter));
  int want = 0;
  for (int r = 0; r < size; ++r)
    if ((r < size / 2) != low) want += r;
  CHECK(sum_other == want, "inter allreduce %d, want %d", sum_other, want);
  /* reduce to the low group's rank 0 of the high group's ranks */
  int red = -1;
  CHECK_MPI(MPI_Reduce(&rank, &red, 1, MPI_INT, MPI_SUM, root, inter));
  if (low && lrank == 0) CHECK(red == want, "inter reduce %d, want %d", red, want);
  /* allgather / alltoall: blocks come from the remote group in its rank order */
  int* from = malloc(sizeof(int) * (size_t)other);
  CHECK_MPI(MPI_Allgather(&rank, 1, MPI_INT, from, 1, MPI_INT, inter));
  for (int j = 0; j < other; ++j)
    CHECK(from[j] == (low ? size / 2 + j : j), "inter allgather [%d] = %d", j, from[j]);
  int* to = malloc(sizeof(int) * (size_t)other);
  for (int j = 0; j < other; ++j) to[j] = rank * 100 + j;
  CHECK_MPI(MPI_Alltoall(to, 1, MPI_INT, from, 1, MPI_INT, inter));
  for (int j = 0; j < other; ++j) {
    int sender = low ? size / 2 + j : j;
    CHECK(from[j] == sender * 100 + lrank, "inter alltoall [%d] = %d", j, from[j]);
  }
  /* gather at the low group's rank 0 from the high group */
  CHECK_MPI(MPI_Gather(&rank, 1, MPI_INT, from, 1, MPI_INT, root, inter));
  if (low && lrank == 0)
    for (int j = 0; j < other; ++j) CHECK(from[j] == size / 2 + j, "inter gather [%d] = %d", j, from[j]);
  int got = -1;
  for (int j = 0; j < other; ++j) to[j] = 9000 + j;
  CHECK_MPI(MPI_Scatter(to, 1, MPI_INT, &got, 1, MPI_INT, root, inter));
  if (!low) CHECK(got == 9000 + lrank, "inter scatter %d", got);
  free(from);
  free(to);
  /* Merge: the low half first (high=0 there). */
  CHECK_MPI(MPI_Intercomm_merge(inter, low ? 0 : 1, &merged));
  int mrank = -1, msize = 0;
  MPI_Comm_rank(merged, &mrank);
  MPI_Comm_size(merged, &msize);
  CHECK(msize == size && mrank == rank, "merged rank %d size %d", mrank, msize);
  int sum = 0;
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, merged);
  CHECK(sum == size * (size - 1) / 2, "allreduce on merged %d", sum);
  /* The other order: the upper half first. */
  MPI_Comm merged2;
  CHECK_MPI(MPI_Intercomm_merge(inter, low ? 1 : 0, &merged2));
  MPI_Comm_rank(merged2, &mrank);
  CHECK(mrank == (low ? rank + (size - size / 2) : rank - size / 2), "merged high-first rank %d", mrank);
  MPI_Comm_free(&merged2);
  MPI_Comm_free(&merged);
  MPI_Comm dup;
  CHECK_MPI(MPI_Comm_dup(inter, &dup));
  MPI_Comm_test_inter(dup, &flag);
  CHECK(flag == 1, "dup of an intercommunicator is one");
  MPI_Comm_free(&dup);
  CHECK_MPI(MPI_Comm_free(&inter));
  MPI_Comm_free(&half);
}

static void test_environment(void) {
  int provided = -1, main_thread = 0;
  MPI_Query_thread(&provided);
  CHECK(provided == MPI_THREAD_MULTIPLE, "query_thread %d", provided);
  MPI_Is_thread_main(&main_thread);
  CHECK(main_thread == 1, "is_thread_main");
  int v = 0, sv = -1;
  MPI_Get_version(&v, &sv);
  CHECK(v == MPI_VERSION && sv == MPI_SUBVERSION, "version %d.%d", v, sv);
  char lib[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  CHECK_MPI(MPI_Get_library_version(lib, &len));
  CHECK(len > 0 && strstr(lib, "xmsg") != NULL, "library version '%s'", lib);
  CHECK(MPI_Wtick() > 0 && MPI_Wtick() < 1, "wtick %g", MPI_Wtick());
  double* mem = NULL;
  CHECK_MPI(MPI_Alloc_mem(1 << 20, MPI_INFO_NULL, &mem));
  CHECK(mem != NULL && ((uintptr_t)mem & 4095) == 0, "alloc_mem page-aligned");
  mem[0] = 1.0;
  mem[(1 << 17) - 1] = 2.0;
  CHECK_MPI(MPI_Free_mem(mem));
  /* One-sided is implemented (tests/mpi/conformance/rma.c covers it): a window is made and freed. */
  MPI_Win win;
  int buf[4];
  CHECK_MPI(MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
  CHECK_MPI(MPI_Win_free(&win));
  CHECK(win == MPI_WIN_NULL, "MPI_Win_free sets MPI_WIN_NULL");
  CHECK(MPI_Comm_c2f(MPI_COMM_WORLD) == (MPI_Fint)MPI_COMM_WORLD && MPI_Comm_f2c(MPI_Comm_c2f(MPI_COMM_SELF)) == MPI_COMM_SELF,
        "comm c2f/f2c");
}

/* MPI-3.1 6.4.3: MPI_Comm_free marks the communicator; operations pending on it complete
 * normally (a non-blocking collective's later steps, a persistent collective or point-to-point
 * request started after the free). Before, the pending collective's next send aborted the job:
 * "comm N is not a valid communicator". */
static void test_free_with_pending_operations(void) {
  MPI_Comm dup;
  CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  int in = rank + 1, out = -1, token = rank, got = -1, bvalue = -1;
  MPI_Request reqs[2], bcast, send, recv;
  CHECK_MPI(MPI_Iallreduce(&in, &out, 1, MPI_INT, MPI_SUM, dup, &reqs[0]));
  CHECK_MPI(MPI_Irecv(&got, 1, MPI_INT, (rank + size - 1) % size, 7, dup, &reqs[1]));
  CHECK_MPI(MPI_Bcast_init(&bvalue, 1, MPI_INT, 0, dup, MPI_INFO_NULL, &bcast));
  CHECK_MPI(MPI_Send_init(&token, 1, MPI_INT, (rank + 1) % size, 8, dup, &send));
  CHECK_MPI(MPI_Recv_init(&got, 1, MPI_INT, (rank + size - 1) % size, 8, dup, &recv));
  CHECK_MPI(MPI_Send(&token, 1, MPI_INT, (rank + 1) % size, 7, dup));
  CHECK_MPI(MPI_Comm_free(&dup));
  CHECK(dup == MPI_COMM_NULL, "MPI_Comm_free sets the handle to MPI_COMM_NULL: %d", dup);
  CHECK_MPI(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));
  CHECK(out == size * (size + 1) / 2, "iallreduce on a freed communicator: %d, want %d", out, size * (size + 1) / 2);
  CHECK(got == (rank + size - 1) % size, "irecv on a freed communicator: %d", got);
  for (int round = 0; round < 2; ++round) {
    bvalue = rank == 0 ? 50 + round : -1;
    got = -1;
    token = rank * 10 + round;
    MPI_Request all[3] = {bcast, send, recv};
    CHECK_MPI(MPI_Startall(3, all));
    CHECK_MPI(MPI_Waitall(3, all, MPI_STATUSES_IGNORE));
    CHECK(bvalue == 50 + round, "round %d: persistent bcast on a freed communicator: %d", round, bvalue);
    CHECK(got == ((rank + size - 1) % size) * 10 + round, "round %d: persistent receive on a freed communicator: %d",
          round, got);
  }
  CHECK_MPI(MPI_Request_free(&bcast));
  CHECK_MPI(MPI_Request_free(&send));
  CHECK_MPI(MPI_Request_free(&recv));
}

int main(int argc, char** argv) {
  int provided = -1;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  /* Everything below runs under MPI_THREAD_MULTIPLE's lock (one thread: threads.c has several). */
  CHECK(provided == MPI_THREAD_MULTIPLE, "MULTIPLE asked: %d provided", provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  test_groups();
  test_comm_creation();
  test_attributes();
  test_errors();
  test_info();
  test_intercomm();
  test_free_with_pending_operations();
  test_environment();
  return FINISH("communicators");
}
