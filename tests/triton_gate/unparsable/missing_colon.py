import triton

def run(A, B, C)
    pass
