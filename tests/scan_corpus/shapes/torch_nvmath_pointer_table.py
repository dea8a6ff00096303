def fill_pointer_table(h, mat2_list, self_list, out_base, stride):
    g = len(mat2_list)
    for i in range(g):
        h[i] = mat2_list[i].data_ptr()  # corpus: sink
        h[g + i] = self_list[i].data_ptr()
        h[2 * g + i] = out_base + i * stride
    return h
