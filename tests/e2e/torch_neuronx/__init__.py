REAL = True
