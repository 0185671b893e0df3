from setuptools import setup

# The Triton kernel sources live in csrc_triton/ at the top of the checkout and
# are installed inside the package as torch_wanops.csrc_triton.
setup(
    name="torch_wanops",
    version="0.1.0",
    description="Bit-exact, faster Wan VAE decoding through fused PyTorch custom ops",
    long_description=open("README.md", encoding="utf-8").read() if __import__("os").path.exists("README.md") else "",
    long_description_content_type="text/markdown",
    python_requires=">=3.10",
    packages=["torch_wanops", "torch_wanops.ops", "torch_wanops.csrc_triton"],
    package_dir={"torch_wanops": "torch_wanops", "torch_wanops.csrc_triton": "csrc_triton"},
    install_requires=["torch>=2.6", "diffusers>=0.35"],
    extras_require={
        "triton": ["triton"],
        "test": ["pytest", "pytest-xdist", "hypothesis"],
        "plot": ["matplotlib"],
    },
    entry_points={"console_scripts": ["wanops=torch_wanops.cli:main"]},
)
